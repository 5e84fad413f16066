/**
 * A small time-limited cache of promises: concurrent readers of a missing entry share one
 * computation, a failed computation is not kept, and at most `maxEntries` keys live at once
 * (the oldest is dropped first), so a client walking through every `limit` cannot grow it.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: Promise<V>; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K, compute: () => Promise<V>): Promise<V> {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > this.now()) return entry.value;
    this.entries.delete(key);
    const value = compute();
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    return value;
  }

  /** Drops one key; returns whether it was cached. */
  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /** Drops every key `matches`. */
  deleteMatching(matches: (key: K) => boolean): void {
    for (const key of [...this.entries.keys()]) if (matches(key)) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
