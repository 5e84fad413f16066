import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";

// What a hosting machine says of itself in a heartbeat, and what the dashboard shows of the
// panel's own machine (`local`, which sends none): the file system of its homes and its load.

export interface HostFigures {
  /** HOME_ROOT's file system (its nearest existing folder's, before the first home is made); null when none can be read. */
  disk: { total_bytes: number; used_bytes: number } | null;
  /** The 1, 5 and 15 minute load averages. */
  load: number[];
}

export async function readHostFigures(homeRoot: string): Promise<HostFigures> {
  return { disk: await diskOf(path.resolve(homeRoot)), load: os.loadavg() };
}

async function diskOf(folder: string): Promise<HostFigures["disk"]> {
  for (let current = folder; ; current = path.dirname(current)) {
    try {
      const stats = await fs.statfs(current);
      return { total_bytes: stats.blocks * stats.bsize, used_bytes: (stats.blocks - stats.bfree) * stats.bsize };
    } catch {
      if (current === path.dirname(current)) return null;
    }
  }
}
