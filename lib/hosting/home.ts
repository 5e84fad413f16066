import fs from "node:fs";
import path from "node:path";
import { env } from "@/lib/env";
import { addGroupMember, createHome } from "@/lib/provisioning/homes";
import { reloadNginx } from "@/lib/provisioning/nginx";

// Where an account's files live and who owns them (README "Web hosting", "Files and SSH"): the
// one place the rest of the panel asks, so sites, SFTP and disk usage agree.

export const webHostingEnabled = () => env().webServer !== null;
/** Homes are made when sites are served or accounts have Linux users. */
export const homesEnabled = () => webHostingEnabled() || env().systemUsers;

export const homeOf = (username: string) => path.join(env().homeRoot, username);
/** The Linux user owning an account's files and PHP: its own, or the panel's/web server's without SYSTEM_USERS. */
export const fileOwner = (username: string) => (env().systemUsers ? username : null);

/**
 * Makes the account's home, or repairs it (owners and modes, never through a link). With a Linux
 * user the home is root's, group the account's: the web server's user joins that group first,
 * so a home made before that layout (the customer's own) is still served once repaired.
 */
export async function prepareHome(username: string): Promise<void> {
  const home = homeOf(username);
  if (env().systemUsers && webHostingEnabled() && (await addGroupMember(username, env().webServerUser)) && fs.existsSync(home)) {
    // nginx's workers take their groups when they start: an existing home's sites stay served
    // only if workers with the new group run before the home becomes root's.
    await reloadNginx();
  }
  await createHome(home, fileOwner(username), env().webServerGroup);
}
