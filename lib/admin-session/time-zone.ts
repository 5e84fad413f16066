// The admin's time zone, in which every time on the admin pages is shown (components/time.tsx):
// the browser's own, which the pages remember in a cookie so that the server renders the next page
// in it too (the first paint then matches what the browser shows). The cookie is the browser's
// word, never trusted further than a valid IANA name: anything else reads as UTC.

export const TIME_ZONE_COOKIE = "panel_tz";

export const FALLBACK_TIME_ZONE = "UTC";

/** `value` when it is a time zone this runtime knows (e.g. Europe/Berlin), else UTC. */
export function knownTimeZone(value: string | undefined | null): string {
  if (!value || value.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(value)) return FALLBACK_TIME_ZONE;
  try {
    return new Intl.DateTimeFormat("en-GB", { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return FALLBACK_TIME_ZONE;
  }
}
