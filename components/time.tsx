"use client";

import { createContext, type ReactNode, useContext, useEffect, useSyncExternalStore } from "react";
import { FALLBACK_TIME_ZONE, TIME_ZONE_COOKIE } from "@/lib/admin-session/time-zone";

// The one way the admin pages show a moment: "2026-11-23 14:05 CET" — 24-hour, in the admin's
// time zone (the browser's), the zone written out — and how long ago or ahead it is as a tooltip.
// The server renders in the zone the browser reported last (TimeZoneProvider, from a cookie), so
// the page it sends already reads right; the browser then renders in its own zone, which differs
// only on a first visit or after the admin travelled, and reports it for the next page.

const ServerTimeZone = createContext<string>(FALLBACK_TIME_ZONE);

const browserTimeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || FALLBACK_TIME_ZONE;
const neverChanges = () => () => {};

/** The admin pages' frame: `zone` is what the server knows of the browser's time zone (its cookie). */
export function TimeZoneProvider({ zone, children }: { zone: string; children: ReactNode }) {
  useEffect(() => {
    const own = browserTimeZone();
    if (own !== zone) document.cookie = `${TIME_ZONE_COOKIE}=${encodeURIComponent(own)}; path=/; max-age=31536000; samesite=lax`;
  }, [zone]);
  return <ServerTimeZone.Provider value={zone}>{children}</ServerTimeZone.Provider>;
}

/** The admin's time zone: the server's idea of it while hydrating, the browser's own after. */
export function useTimeZone(): string {
  const serverZone = useContext(ServerTimeZone);
  return useSyncExternalStore(neverChanges, browserTimeZone, () => serverZone);
}

const MINUTE_MS = 60_000;
// The same value for a whole minute: React renders again only when the snapshot changes.
const currentMinute = () => Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
const everyMinute = (changed: () => void) => {
  const timer = setInterval(changed, MINUTE_MS);
  return () => clearInterval(timer);
};

/** Now, to the minute, in the browser only (null while rendering on the server and hydrating). */
function useNow(): number | null {
  return useSyncExternalStore(everyMinute, currentMinute, () => null);
}

const formats = new Map<string, Intl.DateTimeFormat>();
function formatIn(zone: string) {
  let format = formats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-GB", {
      timeZone: zone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
      timeZoneName: "short",
    });
    formats.set(zone, format);
  }
  return format;
}

const partsOf = (date: Date, zone: string) =>
  Object.fromEntries(formatIn(zone).formatToParts(date).map((part) => [part.type, part.value])) as Record<Intl.DateTimeFormatPartTypes, string>;

/** "2026-11-23 14:05 CET": a moment in `zone`, 24-hour, with the zone's short name. */
export function formatTime(at: string | Date, zone: string): string {
  const parts = partsOf(new Date(at), zone);
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${parts.timeZoneName}`;
}

/** "14:05": the clock time of a moment in `zone` (chart axes, whose zone is said once beside them). */
export function formatClock(at: number | Date, zone: string): string {
  const parts = partsOf(new Date(at), zone);
  return `${parts.hour}:${parts.minute}`;
}

/** The short name of `zone` now ("CET", "UTC", "GMT+5:30"). */
export const zoneName = (zone: string) => partsOf(new Date(), zone).timeZoneName;

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 24 * 3600_000],
  ["month", 30 * 24 * 3600_000],
  ["day", 24 * 3600_000],
  ["hour", 3600_000],
  ["minute", MINUTE_MS],
];
const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

/** "3 hours ago", "in 20 days": `at` seen from `now`. */
export function relativeTime(at: Date, now: number): string {
  const difference = at.getTime() - now;
  for (const [unit, size] of UNITS) {
    if (Math.abs(difference) >= size) return relative.format(Math.round(difference / size), unit);
  }
  return "just now";
}

/** A formatter in the admin's time zone, for text that is not an element of its own (labels, sentences). */
export function useFormatTime(): (at: string | Date) => string {
  const zone = useTimeZone();
  return (at) => formatTime(at, zone);
}

/**
 * A moment as the admin pages show it; `empty` when there is none (never, not yet). The element
 * carries the exact instant (dateTime) and, as a tooltip, how long ago or ahead it is.
 */
export function Time({ at, empty = "—" }: { at: string | Date | null | undefined; empty?: ReactNode }) {
  const zone = useTimeZone();
  const now = useNow();
  if (at === null || at === undefined) return <span className="muted">{empty}</span>;
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return <span>{String(at)}</span>;
  return (
    <time dateTime={date.toISOString()} title={now === null ? zone : `${relativeTime(date, now)} (${zone})`}>
      {formatTime(date, zone)}
    </time>
  );
}

/**
 * How long ago a moment was ("12 minutes ago", "just now"), the exact moment as its tooltip: the
 * age of a figure (a disk usage measured earlier). Until the browser renders, the moment itself.
 */
export function Ago({ at }: { at: string | Date }) {
  const zone = useTimeZone();
  const now = useNow();
  const date = new Date(at);
  return (
    <time dateTime={date.toISOString()} title={formatTime(date, zone)}>
      {now === null ? formatTime(date, zone) : relativeTime(date, Math.max(now, date.getTime()))}
    </time>
  );
}
