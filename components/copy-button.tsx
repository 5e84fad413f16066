"use client";

import { useState } from "react";

/** Copies `value` to the clipboard; says so once done. */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        await navigator.clipboard.writeText(value);
        setCopied(true);
      }}
    >
      {copied ? "Copied" : `Copy ${label}`}
    </button>
  );
}
