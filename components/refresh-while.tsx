"use client";

import { useRouter } from "next/navigation";
import { useEffect } from "react";

/** Reads the page again every `everyMs` while `active` (a move under way): its server components show the progress. */
export function RefreshWhile({ active, everyMs = 3000 }: { active: boolean; everyMs?: number }) {
  const router = useRouter();
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => router.refresh(), everyMs);
    return () => clearInterval(timer);
  }, [active, everyMs, router]);
  return null;
}
