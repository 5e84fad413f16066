import { env } from "@/lib/env";

// The headers every response carries (DESIGN.md "Nothing without a session"), set by server.ts
// before Next.js or the API answers. Pages get a full Content-Security-Policy: scripts, styles,
// images and requests only from the panel itself ('unsafe-inline' because Next.js inlines its
// bootstrap scripts and recharts sets inline styles); API answers, which are never rendered, get
// the strictest one and are never cached.

const PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const API_POLICY = "default-src 'none'; frame-ancestors 'none'";

// Single sign-on and set-up links carry one-time tokens in their query: never in a Referer.
const NO_REFERRER_PATHS = ["/sso", "/setup"];

const isUnder = (pathname: string, prefix: string) => pathname === prefix || pathname.startsWith(`${prefix}/`);

export function securityHeaders(pathname: string): Record<string, string> {
  const api = isUnder(pathname, "/api");
  return {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "content-security-policy": api ? API_POLICY : PAGE_POLICY,
    "referrer-policy": NO_REFERRER_PATHS.some((prefix) => isUnder(pathname, prefix)) ? "no-referrer" : "same-origin",
    ...(api ? { "cache-control": "no-store" } : {}),
    ...(env().publicUrl.startsWith("https://") ? { "strict-transport-security": "max-age=31536000" } : {}),
  };
}
