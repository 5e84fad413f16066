import fs from "node:fs/promises";

/** Whether a Linux user of this name exists on this machine (/etc/passwd). */
export async function linuxUserExists(username: string): Promise<boolean> {
  const passwd = await fs.readFile(/* turbopackIgnore: true */ "/etc/passwd", "utf8").catch(() => "");
  return passwd.split("\n").some((line) => line.split(":", 1)[0] === username);
}
