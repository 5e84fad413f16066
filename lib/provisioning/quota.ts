import { env } from "@/lib/env";
import { validationError } from "@/lib/errors";
import { checkedAbsolutePath, checkedInteger, checkedLinuxName } from "./render-checks";
import { exitReason, operand, runChild, toolEnv } from "./system";

// Disk quotas (docs/applications.md "Disk"): where HOME_ROOT's file system has user quotas on, each
// account's Linux user gets its plan's disk_mb as its block limit with `setquota` (Debian `quota`),
// so the kernel refuses writes past it; elsewhere disk_mb is measured and flagged only
// (usage-details
// `disk.over_limit`). Whether quotas are on is asked once per process (`quotaon -p`).

/** The program's standard output; its failure (or its absence) thrown. */
async function run(program: string, args: string[]): Promise<string> {
  const result = await runChild(program, args, { env: toolEnv(), timeoutMs: 30_000 });
  if (result.code !== 0) throw new Error(`${program} failed: ${exitReason(result)}`);
  return result.stdout;
}
const RENDERER = "setquota";

let mountPoint: Promise<string | null> | undefined;

/** The mount point of HOME_ROOT's file system when user quotas are on there; null otherwise (or without SYSTEM_USERS). */
export function quotaMountPoint(): Promise<string | null> {
  return (mountPoint ??= findQuotaMountPoint());
}

async function findQuotaMountPoint(): Promise<string | null> {
  if (!env().systemUsers) return null;
  try {
    const target = (await run("findmnt", ["-n", "-o", "TARGET", "--target", env().homeRoot])).trim();
    // "user quota on /home (/dev/sda2) is on"; a file system without quotas: a complaint on stderr.
    const stdout = await run("quotaon", ["-p", "-u", "--", operand("a mount point", target)]);
    return /is on\s*$/m.test(stdout) ? target : null;
  } catch {
    return null; // findmnt or quotaon missing (Debian `quota` not installed): no quotas
  }
}

/**
 * Sets the user's block limit to `limitMb` (soft = hard; null: no limit) where quotas are on.
 * Returns whether the kernel enforces it.
 */
export async function setDiskQuota(username: string, limitMb: number | null): Promise<boolean> {
  const mount = await quotaMountPoint();
  if (!mount) return false;
  const user = checkedLinuxName(RENDERER, "username", username);
  const blocks = limitMb === null ? 0 : checkedInteger(RENDERER, "disk limit", limitMb, 1, 1_000_000_000) * 1024; // 1 KiB blocks
  try {
    await run("setquota", ["-u", "--", operand("a user", user), String(blocks), String(blocks), "0", "0", checkedAbsolutePath(RENDERER, "mount point", mount)]);
  } catch (error) {
    // setquota's words (devices, mount points) go to the log; the answer names the plan, whose disk_mb it is.
    console.error(`[quota] setquota for ${user} failed: ${(error as Error).message}`);
    throw validationError("plan", "could not be applied: the disk quota could not be set on this server");
  }
  return true;
}
