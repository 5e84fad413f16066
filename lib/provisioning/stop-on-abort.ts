import type { ChildProcess } from "node:child_process";

/**
 * Ends `child` (SIGTERM) when `signal` aborts: the programs of a restore whose request has ended.
 * runuser passes the signal on to the program it runs as the account.
 */
export function stopOnAbort(child: ChildProcess, signal?: AbortSignal): void {
  if (!signal) return;
  const stop = () => void child.kill("SIGTERM");
  if (signal.aborted) return stop();
  signal.addEventListener("abort", stop, { once: true });
  child.once("close", () => signal.removeEventListener("abort", stop));
}
