import fs from "node:fs/promises";
import path from "node:path";
import { env, liesWithin } from "@/lib/env";
import { checkedHostName, checkedInteger, checkedIpAddress, refuseRenderedValue } from "./render-checks";
import { eachLimited, makeDirectories, readFilesIfExist, readIfExists, repairModes, runCommand, writeAtomically, writeFilesAtomically } from "./system";

// BIND zone files, one per domain: `<ZONES_DIR>/<domain>.zone`, rewritten atomically (temporary
// file, flushed to disk, rename) after every change of the zone, then ZONE_RELOAD_COMMAND (if
// set) with `{zone}` replaced by the domain. A failing reload is logged and returned, never
// thrown: the change is committed and the file is right; the name server just has not picked it
// up yet.

export interface ZoneRecord {
  name: string;
  type: string;
  content: string;
  ttl: number;
  priority: number | null;
  weight: number | null;
  port: number | null;
}

export interface Zone {
  domain: string;
  serial: number;
  records: ZoneRecord[];
}

const DOMAIN = /^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/;

const fqdn = (host: string) => (host.endsWith(".") ? host : `${host}.`);

const RENDERER = "zone file";

/**
 * TXT content as BIND character-strings: quoted, escaped, split into 255-byte pieces. TXT is free
 * text, so it is escaped rather than refused: `"` and `\\` get a backslash, every byte outside
 * printable ASCII (newline, CR, NUL, UTF-8) becomes `\DDD`, so no value can end its string or
 * its line.
 */
function txtStrings(text: string): string {
  if (typeof text !== "string") refuseRenderedValue(RENDERER, "TXT content", text, "it must be text");
  const bytes = Buffer.from(text, "utf8");
  const pieces: string[] = [];
  for (let start = 0; start < bytes.length || pieces.length === 0; start += 255) {
    const piece = bytes.subarray(start, start + 255);
    let escaped = "";
    for (const byte of piece) {
      if (byte === 0x22 || byte === 0x5c) escaped += `\\${String.fromCharCode(byte)}`;
      else if (byte < 0x20 || byte > 0x7e) escaped += `\\${String(byte).padStart(3, "0")}`;
      else escaped += String.fromCharCode(byte);
    }
    pieces.push(`"${escaped}"`);
    if (bytes.length === 0) break;
  }
  return pieces.join(" ");
}

const target = (kind: string, host: string) => fqdn(checkedHostName(RENDERER, kind, host, { finalDot: true }));
const uint16 = (kind: string, value: unknown) => checkedInteger(RENDERER, kind, value, 0, 65535);
const uint32 = (kind: string, value: unknown) => checkedInteger(RENDERER, kind, value, 0, 4294967295);

// Every value checked again here (render-checks.ts): a zone file is loaded by the name server,
// and a line slipped into it would answer for the whole zone.
function rdata(record: ZoneRecord): string {
  switch (record.type) {
    case "SOA": {
      const fields = typeof record.content === "string" ? record.content.split(/ +/) : [];
      if (fields.length !== 7 || !fields.slice(2).every((field) => /^[0-9]{1,10}$/.test(field))) {
        refuseRenderedValue(RENDERER, "SOA content", record.content, "it is <primary> <hostmaster> and five numbers, on one line");
      }
      const [primary, hostmaster, ...numbers] = fields;
      for (const number of numbers) uint32("SOA number", Number(number));
      return `${target("SOA primary", primary)} ${target("SOA hostmaster", hostmaster)} ${numbers.join(" ")}`;
    }
    case "CNAME":
    case "NS":
      return target(`${record.type} target`, record.content);
    case "MX":
      return `${uint16("MX priority", record.priority)} ${target("MX target", record.content)}`;
    case "SRV":
      return `${uint16("SRV priority", record.priority)} ${uint16("SRV weight", record.weight)} ${uint16("SRV port", record.port)} ${target("SRV target", record.content)}`;
    case "TXT":
      return txtStrings(record.content);
    case "A":
      return checkedIpAddress(RENDERER, "A address", record.content, 4);
    case "AAAA":
      return checkedIpAddress(RENDERER, "AAAA address", record.content, 6);
    default:
      return refuseRenderedValue(RENDERER, "record type", record.type, "it must be SOA, NS, A, AAAA, CNAME, MX, TXT or SRV");
  }
}

function recordLine(record: ZoneRecord): string {
  const name = record.name === "@" ? "@" : checkedHostName(RENDERER, "record name", record.name, { wildcard: true });
  const ttl = checkedInteger(RENDERER, "TTL", record.ttl, 0, 2147483647);
  return `${name}\t${ttl}\tIN\t${record.type}\t${rdata(record)}`;
}

export function renderZoneFile(zone: Zone): string {
  checkedHostName(RENDERER, "zone name", zone.domain);
  uint32("serial", zone.serial);
  const order = ["SOA", "NS"];
  const records = [...zone.records].sort(
    (a, b) => (order.indexOf(a.type) + 1 || 9) - (order.indexOf(b.type) + 1 || 9),
  );
  const lines = [
    `; Zone ${zone.domain}, serial ${zone.serial}. Written by the hosting panel: edit through the panel.`,
    `$ORIGIN ${fqdn(zone.domain)}`,
    "$TTL 3600",
    ...records.map(recordLine),
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * Who may read the zone files. In DATA_DIR (the default) they are the panel's alone, 0600.
 * Elsewhere ZONES_DIR is a name server's, which reads them as its own user (Debian's named runs
 * as `bind`): 0640, group that of ZONES_DIR (made 0750 when missing: give it the name server's
 * group, docs/configuration.md "Configuration"). Never world-readable: another account's names are
 * not for every customer to list.
 */
async function zoneFileAccess(): Promise<{ mode: number; owner?: { uid: number; gid: number } }> {
  const { zonesDir, dataDir } = env();
  if (liesWithin(zonesDir, dataDir)) return { mode: 0o600 };
  await makeDirectories(zonesDir, 0o750);
  const { gid } = await fs.stat(zonesDir);
  // Files take the process's group; a non-root panel can give them only a group of its own.
  return gid === process.getegid?.() ? { mode: 0o640 } : { mode: 0o640, owner: { uid: process.getuid!(), gid } };
}

export function zoneFilePath(domain: string): string {
  if (!DOMAIN.test(domain)) throw new Error(`not a domain name: ${domain}`);
  return path.join(env().zonesDir, `${domain}.zone`);
}

// `.<domain>.zone.<12 hex>.tmp`: the name writeAtomically gives its temporary file.
const TEMPORARY_FILE = /^\..+\.zone\.[0-9a-f]{12}\.tmp$/;

/**
 * Removes temporary zone files a crash left behind in ZONES_DIR (at start). Only files older than
 * a minute: a younger one may be another panel process's write in progress.
 */
export async function removeOrphanTemporaryFiles(): Promise<void> {
  const dir = env().zonesDir;
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((entry) => TEMPORARY_FILE.test(entry))) {
    const file = path.join(dir, name);
    const stat = await fs.stat(file).catch(() => null);
    if (stat && Date.now() - stat.mtimeMs > 60_000) await fs.rm(file, { force: true });
  }
}

/**
 * Writes the zone's file and reloads it, only when its content changed (a start-up over
 * thousands of zones rewrites and reloads nothing that is already right); `reloadError` says why
 * the reload failed, if it did.
 */
export async function writeZoneFile(zone: Zone): Promise<{ path: string; reloadError: string | null }> {
  const target = zoneFilePath(zone.domain);
  const contents = renderZoneFile(zone);
  const access = await zoneFileAccess();
  if ((await readIfExists(target)) === contents) {
    repairModes([target], access.mode, access.owner);
    return { path: target, reloadError: null };
  }
  await writeAtomically(target, contents, access.mode, access.owner);
  const command = env().zoneReloadCommand;
  const reloadError = command ? await runCommand(command, { zone: zone.domain }, 15_000) : null;
  if (reloadError) console.error(`[dns] zone ${zone.domain} written, but its reload failed: ${reloadError}`);
  return { path: target, reloadError };
}

/**
 * Writes the files of many zones (start-up) as writeZoneFile does one, in one batch
 * (writeFilesAtomically: one flush to disk for all, not an fsync each), then reloads each zone
 * written. A zone a renderer refuses is logged and keeps its file; a failed write of the batch
 * is thrown (the files renamed before it are whole, the rest keep their old content).
 */
export async function writeZoneFiles(zones: Zone[]): Promise<void> {
  const rendered: { domain: string; path: string; contents: string }[] = [];
  for (const zone of zones) {
    try {
      rendered.push({ domain: zone.domain, path: zoneFilePath(zone.domain), contents: renderZoneFile(zone) });
    } catch (error) {
      console.error(`[dns] could not write the zone file of ${zone.domain}:`, (error as Error).message);
    }
  }
  const access = await zoneFileAccess();
  const onDisk = await readFilesIfExist(rendered.map((file) => file.path));
  const changed = rendered.filter((file) => onDisk.get(file.path) !== file.contents);
  // Files an older version wrote 0644 are closed even when their zone did not change.
  repairModes(rendered.filter((file) => onDisk.get(file.path) === file.contents).map((file) => file.path), access.mode, access.owner);
  await writeFilesAtomically(changed.map((file) => ({ ...file, ...access })));
  const command = env().zoneReloadCommand;
  if (!command) return;
  await eachLimited(changed, 64, async ({ domain }) => {
    const reloadError = await runCommand(command, { zone: domain }, 15_000);
    if (reloadError) console.error(`[dns] zone ${domain} written, but its reload failed: ${reloadError}`);
  });
}

export async function removeZoneFile(domain: string): Promise<void> {
  await fs.rm(zoneFilePath(domain), { force: true });
}
