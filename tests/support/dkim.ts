import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";

// DKIM as a receiving server checks it: Debian's dkimpy (python3-dkim) verifies a message's first
// DKIM-Signature, its key looked up only among the TXT records a test gives (the panel's zone),
// never in public DNS.

/**
 * The TXT records of the zone file the panel wrote for `domain`, by full name, each record's
 * strings joined (as a resolver gives them); every string at most 255 bytes (RFC 1035).
 */
export function zoneTxtRecords(zoneFile: string, domain: string): Map<string, string> {
  const records = new Map<string, string>();
  for (const line of fs.readFileSync(zoneFile, "utf8").split("\n")) {
    const match = /^(\S+)\t\d+\tIN\tTXT\t(.*)$/.exec(line);
    if (!match) continue;
    const strings = [...match[2].matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((found) => found[1].replace(/\\(.)/g, "$1"));
    for (const piece of strings) assert.ok(Buffer.byteLength(piece) <= 255, `a TXT string of ${Buffer.byteLength(piece)} bytes: ${line}`);
    records.set(match[1] === "@" ? domain : `${match[1]}.${domain}`, strings.join(""));
  }
  return records;
}

const DKIM_VERIFY = `import sys, json, dkim
records = json.loads(sys.argv[1])
def dnsfunc(name, timeout=5):
    text = records.get(name.decode().rstrip(".").lower())
    return text.encode() if text is not None else None
print(json.dumps({"pass": dkim.verify(sys.stdin.buffer.read(), dnsfunc=dnsfunc)}))
`;

/** dkimpy's verdict on `message`'s first DKIM-Signature, the keys looked up among `records` (TXT content by full name) only. */
export function verifyDkim(message: string, records: Map<string, string>): boolean {
  const out = execFileSync("/usr/bin/python3", ["-c", DKIM_VERIFY, JSON.stringify(Object.fromEntries(records))], { input: message, encoding: "utf8", timeout: 30_000 });
  return JSON.parse(out).pass === true;
}

/** The d= and s= of each DKIM-Signature header of `message`. */
export function dkimSignatures(message: string): { d: string; s: string }[] {
  const unfolded = message.replace(/\r?\n[ \t]+/g, " ");
  return [...unfolded.matchAll(/^DKIM-Signature:(.*)$/gim)].map((found) => ({ d: /\bd=([^;\s]+)/.exec(found[1])?.[1] ?? "", s: /\bs=([^;\s]+)/.exec(found[1])?.[1] ?? "" }));
}
