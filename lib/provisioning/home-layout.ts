import fs from "node:fs";
import path from "node:path";
import { env } from "@/lib/env";
import { addGroupMember, createHome } from "./homes";
import { assertPanelUser } from "./marks";
import { reloadNginx } from "./nginx";

// Where an account's files live and who owns them (docs/web-hosting.md
// "What the panel writes where"; docs/files-and-ssh.md "How it is laid out, and why"): the
// one place the rest of the panel asks, so sites, SFTP and disk usage agree.

export const webHostingEnabled = () => env().webServer !== null;
/** Homes are made when sites are served or accounts have Linux users. */
export const homesEnabled = () => webHostingEnabled() || env().systemUsers;

export const homeOf = (username: string) => path.join(env().homeRoot, username);
/**
 * Where an account's web logs are (docs/applications.md "Logs"): the home's logs/ (root's, the
 * account reads it, cannot change it) when the panel serves the sites; ACCESS_LOG_DIR/<username>
 * when another web server writes them. As a trusted directory and the path below it, to open
 * without links.
 */
export function accountLogLocation(username: string): { trusted: string; below: string } {
  return webHostingEnabled() ? { trusted: env().homeRoot, below: path.join(username, "logs") } : { trusted: env().accessLogDir, below: username };
}
export const accountLogDir = (username: string) => {
  const { trusted, below } = accountLogLocation(username);
  return path.join(trusted, below);
};
/**
 * The logs nginx writes in it: `<domain>.log` per site (access, combined format) and one
 * `nginx-error.log` for all the account's sites (one open file per account, not per site: nginx
 * holds every log open, and 10,000 sites would need 20,000 files).
 */
export const accessLogName = (domain: string) => `${domain}.log`;
export const NGINX_ERROR_LOG = "nginx-error.log";
/** An access log of one of the account's domains (a domain's name has a dot: php-error.log and cron.log are not). */
export const isAccessLogName = (name: string) => /^[a-z0-9-]+(\.[a-z0-9-]+)+\.log$/.test(name);

/**
 * Where the proxy profile's application listens: HOME/run/<name> (docs/applications.md "Site
 * profiles"). run/ is root's, sticky and open to whoever enters the home (homes.ts
 * makeRunDirectory).
 */
export const proxySocketPath = (username: string, name: string) => path.join(homeOf(username), "run", name);

/**
 * The home's folders the account's sites are served from, by their domains' document roots
 * (`public_html`, `shop/public`…): the customer's files. The rest of the home is the panel's.
 */
export function siteFolders(documentRoots: (string | null)[]): string[] {
  const folders = new Set(documentRoots.flatMap((root) => root?.split("/")[0] ?? []));
  return [...folders].filter((folder) => /^[\w.-]+$/.test(folder) && !/^\.\.?$/.test(folder));
}

/** The Linux user owning an account's files and PHP: its own, or the panel's/web server's without SYSTEM_USERS. */
export const fileOwner = (username: string) => (env().systemUsers ? username : null);

/**
 * Makes the account's home, or repairs it (owners and modes, never through a link). With a Linux
 * user the home is root's, group the account's: the web server's user joins that group first,
 * so a home made before that layout (the customer's own) is still served once repaired.
 */
export async function prepareHome(username: string): Promise<void> {
  // The home's group is the account's own: never another's group of that name (./marks.ts).
  if (env().systemUsers) await assertPanelUser(username);
  await letWebServerIn(username);
  await createHome(homeOf(username), fileOwner(username), env().webServerGroup);
}

/**
 * The web server's user in the account's group (with Linux users and web hosting): gpasswd when
 * it is not yet, which locks /etc/group — a reconcile calls this for each account one after
 * another before it prepares their homes several at once.
 */
export async function letWebServerIn(username: string): Promise<void> {
  if (!env().systemUsers || !webHostingEnabled()) return;
  await assertPanelUser(username);
  if ((await addGroupMember(username, env().webServerUser)) && fs.existsSync(homeOf(username))) {
    // nginx's workers take their groups when they start: an existing home's sites stay served
    // only if workers with the new group run before the home becomes root's.
    await reloadNginx();
  }
}
