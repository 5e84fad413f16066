import fs from "node:fs/promises";
import os from "node:os";

// What a hosting machine says of itself in a heartbeat, and what the dashboard shows of the
// panel's own machine (`local`, which sends none): the file system of its homes and its load.

export interface HostFigures {
  /** HOME_ROOT's file system; null when it cannot be read (not made yet). */
  disk: { total_bytes: number; used_bytes: number } | null;
  /** The 1, 5 and 15 minute load averages. */
  load: number[];
}

export async function readHostFigures(homeRoot: string): Promise<HostFigures> {
  const disk = await fs.statfs(homeRoot).then(
    (stats) => ({ total_bytes: stats.blocks * stats.bsize, used_bytes: (stats.blocks - stats.bfree) * stats.bsize }),
    () => null,
  );
  return { disk, load: os.loadavg() };
}
