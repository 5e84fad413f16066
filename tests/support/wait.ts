// Waiting in a test for what a server does in its own time (a node's agent, a move, a job).

/** `probe`'s first truthy answer (a probe that throws counts as none yet); past `timeoutMs`, an error naming `what`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
