import type { ProcessReading } from "./metrics-sources";

/**
 * How processes are grouped into the named services of GET /api/metrics/service-history. A
 * service is named after the program, not its role, so a server running nginx in front of
 * apache shows both:
 *
 * | service      | role                   | process names                      |
 * |--------------|------------------------|------------------------------------|
 * | panel        | this control panel     | this process and all its descendants |
 * | nginx        | web server             | nginx                              |
 * | apache       | web server             | apache2, httpd                     |
 * | caddy        | web server             | caddy                              |
 * | mariadb      | database server        | mariadbd                           |
 * | mysql        | database server        | mysqld (also MariaDB before 10.5)  |
 * | postgresql   | database server        | postgres, postmaster               |
 * | php-fpm      | PHP process manager    | php-fpm, php-fpm8.3, php-fpm: …    |
 * | redis        | cache server           | redis-server                       |
 * | memcached    | cache server           | memcached                          |
 *
 * The panel is matched first (a child it spawns, goaccess say, counts as the panel). A service
 * with no running process gets no row for that tick. Memory is the sum of the processes' RSS, so
 * memory a service's processes share (PostgreSQL's shared buffers) is counted once per process.
 */
export const SERVICE_PATTERNS: readonly { service: string; names: RegExp }[] = [
  { service: "nginx", names: /^nginx$/ },
  { service: "apache", names: /^(apache2|httpd)$/ },
  { service: "caddy", names: /^caddy$/ },
  { service: "mariadb", names: /^mariadbd$/ },
  { service: "mysql", names: /^mysqld$/ },
  { service: "postgresql", names: /^(postgres|postmaster)$/ },
  { service: "php-fpm", names: /^php-fpm/ },
  { service: "redis", names: /^redis-server$/ },
  { service: "memcached", names: /^memcached$/ },
];

export const PANEL_SERVICE = "panel";

export interface ServiceUsage {
  serviceName: string;
  cpuPercent: number;
  memoryMb: number;
  memoryPercent: number;
  processCount: number;
}

/** The pids of `rootPid` and every process below it. */
function descendantsOf(processes: ProcessReading[], rootPid: number): Set<number> {
  const children = new Map<number, number[]>();
  for (const p of processes) {
    const siblings = children.get(p.parentPid);
    if (siblings) siblings.push(p.pid);
    else children.set(p.parentPid, [p.pid]);
  }
  const found = new Set<number>([rootPid]);
  const queue = [rootPid];
  while (queue.length) {
    for (const child of children.get(queue.pop()!) ?? []) {
      if (!found.has(child)) {
        found.add(child);
        queue.push(child);
      }
    }
  }
  return found;
}

/**
 * Sums the processes of each known service (see the table above); unknown processes are left
 * out. With the machine's total memory, memory_percent is RSS / total (ps rounds each process's
 * share to 0.1 %, which hides small processes); without it, the sum of those shares.
 */
export function groupServices(
  processes: ProcessReading[],
  panelPid: number,
  totalMemoryBytes: number | null = null,
): ServiceUsage[] {
  const panelPids = descendantsOf(processes, panelPid);
  const usage = new Map<string, ServiceUsage>();
  for (const p of processes) {
    const service = panelPids.has(p.pid)
      ? PANEL_SERVICE
      : SERVICE_PATTERNS.find((pattern) => pattern.names.test(p.name))?.service;
    if (!service) continue;
    let entry = usage.get(service);
    if (!entry) {
      entry = { serviceName: service, cpuPercent: 0, memoryMb: 0, memoryPercent: 0, processCount: 0 };
      usage.set(service, entry);
    }
    entry.cpuPercent += p.cpuPercent;
    entry.memoryMb += p.rssBytes / (1024 * 1024);
    entry.memoryPercent += p.memoryPercent;
    entry.processCount += 1;
  }
  if (totalMemoryBytes) {
    for (const entry of usage.values()) entry.memoryPercent = ((entry.memoryMb * 1024 * 1024) / totalMemoryBytes) * 100;
  }
  return [...usage.values()].sort((a, b) => a.serviceName.localeCompare(b.serviceName));
}
