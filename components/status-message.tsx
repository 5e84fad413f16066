"use client";

import { usePathname } from "next/navigation";
import { useEffect, useSyncExternalStore } from "react";

// What the admin's last action did, said once at the top of the page it leads to ("Domain
// shop.example created" on the list a form went back to, "Database shop deleted" where the row
// was). One message at a time, kept in the browser's memory only (never in a URL): it is shown on
// `path` and forgotten once the admin goes to another page.

interface Status {
  text: string;
  tone: "ok" | "waiting";
  path: string;
  seen: boolean;
}

let current: Status | null = null;
const listeners = new Set<() => void>();
const changed = () => listeners.forEach((listener) => listener());

/** Says `text` at the top of the page at `path` (this one when left out), once it shows. */
export function announce(text: string, { path, tone = "ok" }: { path?: string; tone?: Status["tone"] } = {}) {
  current = { text, tone, path: path ?? window.location.pathname, seen: false };
  changed();
}

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => void listeners.delete(listener);
};

/** The last action's message, on the page it was meant for (in every page's header). */
export function StatusMessage() {
  const pathname = usePathname();
  const status = useSyncExternalStore(subscribe, () => current, () => null);
  const here = status !== null && status.path === pathname;
  useEffect(() => {
    if (!current) return;
    if (current.path === pathname) current.seen = true;
    else if (current.seen) {
      current = null;
      changed();
    }
  }, [pathname, status]);
  if (!here) return null;
  return (
    <p className={status.tone === "ok" ? "success" : "notice"} role="status" data-testid="status-message">
      {status.text}
    </p>
  );
}
