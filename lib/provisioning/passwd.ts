import fs from "node:fs/promises";

// The machine's users and groups, read from /etc/passwd and /etc/group: the panel makes its
// users and groups with useradd and groupadd, which write those files (NSS sources such as LDAP
// are not asked). A file is parsed again only when it changed (its inode, size or time), so a
// reconcile that asks about thousands of accounts reads it once.

type File = "/etc/passwd" | "/etc/group";

const parsed = new Map<File, { version: string; entries: string[][] }>();

async function entries(file: File): Promise<string[][]> {
  const stat = await fs.stat(/* turbopackIgnore: true */ file).catch(() => null);
  if (!stat) return [];
  const version = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  const known = parsed.get(file);
  if (known?.version === version) return known.entries;
  const text = await fs.readFile(/* turbopackIgnore: true */ file, "utf8").catch(() => "");
  const fresh = text
    .split("\n")
    .filter(Boolean)
    .map((line) => line.split(":"));
  parsed.set(file, { version, entries: fresh });
  return fresh;
}

/** The names of every Linux user of this machine. */
export async function linuxUsernames(): Promise<Set<string>> {
  return new Set((await entries("/etc/passwd")).map(([name]) => name));
}

/** Whether a Linux user of this name exists on this machine. */
export async function linuxUserExists(username: string): Promise<boolean> {
  return (await linuxUsernames()).has(username);
}

/** Whether a Linux group of this name exists on this machine. */
export async function linuxGroupExists(group: string): Promise<boolean> {
  return (await linuxGroupIds()).has(group);
}

/** The id of the Linux user of this name; null when there is none. */
export async function linuxUserId(username: string): Promise<number | null> {
  const entry = (await entries("/etc/passwd")).find(([name]) => name === username);
  return entry ? Number(entry[2]) : null;
}

/** Every group of this machine by name, with its id. */
export async function linuxGroupIds(): Promise<Map<string, number>> {
  return new Map((await entries("/etc/group")).map(([name, , gid]) => [name, Number(gid)]));
}

const memberSets = new Map<string, { entries: string[][]; members: Set<string> | null }>();

/** The members of a group as a set (kept while /etc/group does not change: a reconcile asks once per account). */
export async function linuxGroupMemberSet(group: string): Promise<Set<string> | null> {
  const current = await entries("/etc/group");
  const known = memberSets.get(group);
  if (known?.entries === current) return known.members;
  const entry = current.find(([name]) => name === group);
  const members = entry ? new Set((entry[3] ?? "").split(",").filter(Boolean)) : null;
  memberSets.set(group, { entries: current, members });
  return members;
}

/** The members of a group (its supplementary members, as /etc/group lists them); null when there is no such group. */
export async function linuxGroupMembers(group: string): Promise<string[] | null> {
  const entry = (await entries("/etc/group")).find(([name]) => name === group);
  return entry ? (entry[3] ?? "").split(",").filter(Boolean) : null;
}

export interface PasswdEntry {
  uid: number;
  gid: number;
  home: string;
  shell: string;
}

const passwdEntry = (fields: string[]): PasswdEntry => ({ uid: Number(fields[2]), gid: Number(fields[3]), home: fields[5] ?? "", shell: fields[6] ?? "" });

/** The Linux user of this name as /etc/passwd has it (its primary group, home and shell); null when there is none. */
export async function linuxPasswdEntry(username: string): Promise<PasswdEntry | null> {
  const entry = (await entries("/etc/passwd")).find(([name]) => name === username);
  return entry ? passwdEntry(entry) : null;
}

/** Every Linux user of this machine by name, as /etc/passwd has it. */
export async function linuxPasswdEntries(): Promise<Map<string, PasswdEntry>> {
  return new Map((await entries("/etc/passwd")).map((fields) => [fields[0], passwdEntry(fields)]));
}
