import Link from "next/link";
import type { ReactNode } from "react";

// How the admin pages draw a state and a failure, the same on every page: a badge (green when
// well, red for trouble, grey otherwise) and, for trouble, its reason in red beside it, with a
// link to where it is dealt with when there is such a place.

export type Tone = "ok" | "trouble" | "neutral";

export function Badge({ tone, children }: { tone: Tone; children: ReactNode }) {
  return <span className={tone === "ok" ? "badge on" : tone === "trouble" ? "badge off" : "badge"}>{children}</span>;
}

/**
 * A failure (a backup, a certificate, a node): a red badge, the panel's reason, and what to do
 * about it (`fix`: a link to the page where it is dealt with).
 */
export function Failure({ label = "Failed", reason, fix }: { label?: string; reason?: ReactNode; fix?: { href: string; label: string } }) {
  return (
    <span className="failure">
      <Badge tone="trouble">{label}</Badge>
      {reason && <span className="error"> {reason}</span>}
      {fix && (
        <>
          {" "}
          <Link href={fix.href}>{fix.label}</Link>
        </>
      )}
    </span>
  );
}
