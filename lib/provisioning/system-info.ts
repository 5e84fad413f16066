import os from "node:os";
import si from "systeminformation";
import type { z } from "zod";
import type { systemInfoSchema } from "@/lib/metrics/schemas";

export type SystemInfo = z.infer<typeof systemInfoSchema>;

const GIB = 1024 ** 3;

/** "3d 4h 5m 6s" (leading zero units left out). */
export function formatUptime(totalSeconds: number): string {
  const days = Math.floor(totalSeconds / 86_400);
  const hours = Math.floor((totalSeconds % 86_400) / 3_600);
  const minutes = Math.floor((totalSeconds % 3_600) / 60);
  const seconds = totalSeconds % 60;
  const parts = [days && `${days}d`, (days || hours) && `${hours}h`, (days || hours || minutes) && `${minutes}m`, `${seconds}s`];
  return parts.filter(Boolean).join(" ");
}

/**
 * The machine as it is now: systeminformation for the distribution and memory, node:os for the
 * rest. Values are reported as the system gives them (in containers the CPU speed is often 0).
 * Memory "used" is total − available, as in the collector's RAM figures.
 */
export async function readSystemInfo(): Promise<SystemInfo> {
  const [osInfo, mem] = await Promise.all([si.osInfo(), si.mem()]);
  const cpus = os.cpus();
  const used = mem.total - mem.available;
  const uptimeSeconds = Math.floor(os.uptime());
  return {
    arch: os.arch(),
    cpu: {
      cores: cpus.length,
      model: cpus[0]?.model.trim() ?? "",
      speed: Math.round(cpus[0]?.speed ?? 0),
    },
    distro: {
      // systeminformation's logofile is the distribution's id ("debian", "ubuntu", …).
      id: osInfo.logofile || osInfo.platform,
      name: osInfo.distro,
      version: osInfo.release,
    },
    hostname: os.hostname(),
    kernelVersion: osInfo.kernel || os.release(),
    release: os.release(),
    platform: os.platform(),
    nodeVersion: process.version,
    memory: {
      free: mem.available,
      total: mem.total,
      used,
      freeGB: (mem.available / GIB).toFixed(2),
      totalGB: (mem.total / GIB).toFixed(2),
      usedGB: (used / GIB).toFixed(2),
      percent: mem.total > 0 ? ((used / mem.total) * 100).toFixed(2) : "0.00",
    },
    networkInterfaces: Object.entries(os.networkInterfaces()).map(([name, addresses]) => ({
      name,
      addresses: (addresses ?? []).map((address) => ({
        address: address.address,
        family: address.family,
        internal: address.internal,
        mac: address.mac,
        netmask: address.netmask,
      })),
    })),
    uptime: { seconds: uptimeSeconds, formatted: formatUptime(uptimeSeconds) },
  };
}
