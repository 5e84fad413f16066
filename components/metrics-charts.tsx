"use client";

import Link from "next/link";
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { MetricsOverRange, MetricsRange, MetricsStats, ServiceHistoryRecord } from "@/lib/metrics/service";
import { formatClock, formatTime, useTimeZone, zoneName } from "./time";

const colors = ["#2456d6", "#d6453d", "#1e7d32", "#a0620a", "#7b3fb3", "#0b7d8c"];

const RANGES: { range: MetricsRange; label: string }[] = [
  { range: "1h", label: "1 h" },
  { range: "24h", label: "24 h" },
  { range: "7d", label: "7 d" },
  { range: "30d", label: "30 d" },
];

/** "60 s", "12 min", "6 h": a duration as the charts' captions say it. */
export function duration(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 360) / 10} h`;
}

/** "1.2 Mbit/s": a rate in bits per second with the unit that suits it (SI, as network speeds are given). */
export function bitRate(bitsPerSecond: number): string {
  const units = ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"];
  let value = bitsPerSecond;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toLocaleString("en-US", { maximumFractionDigits: value < 10 ? 1 : 0 })} ${units[unit]}`;
}

/** A chart, or "Collecting data" while there are fewer than two points to draw a line through. */
function Chart({ title, points, intervalS, children }: { title: string; points: number; intervalS: number; children: React.ReactElement }) {
  return (
    <section className="card" aria-label={title}>
      <h2>{title}</h2>
      {points < 2 ? (
        <div className="collecting" style={{ height: 240 }} role="status">
          <p>
            <strong>Collecting data.</strong>
          </p>
          <p className="muted">A sample is taken every {duration(intervalS)}; the line starts with the second one.</p>
        </div>
      ) : (
        <div style={{ width: "100%", height: 240 }}>
          <ResponsiveContainer>{children}</ResponsiveContainer>
        </div>
      )}
    </section>
  );
}

export function RangePicker({ current }: { current: MetricsRange }) {
  return (
    <nav className="range-picker actions" aria-label="Range of the charts">
      {RANGES.map(({ range, label }) => (
        <Link key={range} className="button" href={`/admin?range=${range}`} aria-current={range === current ? "page" : undefined}>
          {label}
        </Link>
      ))}
    </nav>
  );
}

export function MetricsCharts({ overRange, stats, services }: { overRange: MetricsOverRange; stats: MetricsStats; services: ServiceHistoryRecord[] }) {
  // The axes show times in the admin's time zone, named once above the charts; a range over a
  // day shows the date too.
  const zone = useTimeZone();
  const long = overRange.range === "7d" || overRange.range === "30d";
  const time = (timestamp: number) => (long ? formatTime(new Date(timestamp), zone).slice(5, 16) : formatClock(timestamp, zone));
  const cpuRam = overRange.points.map((point) => ({
    time: time(point.timestamp),
    CPU: Number(point.cpu_percent.toFixed(1)),
    RAM: Number(point.ram_percent.toFixed(1)),
  }));
  const network = overRange.network.map((point) => ({ time: time(point.timestamp), Received: Math.round(point.rx_bps), Sent: Math.round(point.tx_bps) }));
  const serviceNames = [...new Set(services.map((row) => row.service_name))];
  const byTime = new Map<number, Record<string, number | string>>();
  for (const row of [...services].reverse()) {
    const point = byTime.get(row.timestamp) ?? { time: formatClock(row.timestamp, zone) };
    point[row.service_name] = Number(row.memory_mb.toFixed(1));
    byTime.set(row.timestamp, point);
  }
  const averaged = overRange.bucket_s > overRange.interval_s ? `; each point averages ${duration(overRange.bucket_s)}` : "";
  return (
    <>
      <div className="page-header">
        <h2 id="charts-heading" style={{ margin: 0 }}>
          This machine over the last {RANGES.find(({ range }) => range === overRange.range)!.label}
        </h2>
        <RangePicker current={overRange.range} />
      </div>
      <p className="muted" data-testid="sampling">
        Sampled every {duration(overRange.interval_s)}
        {averaged}. Times in {zoneName(zone)} ({zone}).
      </p>
      <div className="grid">
        <Chart title="CPU and RAM (%)" points={cpuRam.length} intervalS={overRange.interval_s}>
          <LineChart data={cpuRam}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="time" />
            <YAxis domain={[0, 100]} />
            <Tooltip />
            <Legend />
            <Line type="monotone" dataKey="CPU" stroke={colors[0]} dot={false} isAnimationActive={false} />
            <Line type="monotone" dataKey="RAM" stroke={colors[1]} dot={false} isAnimationActive={false} />
          </LineChart>
        </Chart>
        <Chart title="Network (bit/s)" points={network.length} intervalS={overRange.interval_s}>
          <LineChart data={network}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="time" />
            <YAxis tickFormatter={(value: number) => bitRate(value)} width={90} />
            <Tooltip formatter={(value) => bitRate(Number(value))} />
            <Legend />
            <Line type="monotone" dataKey="Received" stroke={colors[2]} dot={false} isAnimationActive={false} />
            <Line type="monotone" dataKey="Sent" stroke={colors[3]} dot={false} isAnimationActive={false} />
          </LineChart>
        </Chart>
        <Chart title="CPU cores, current (%)" points={stats.cpu_cores.length ? 2 : 0} intervalS={overRange.interval_s}>
          <BarChart data={stats.cpu_cores.map((core) => ({ core: core.core, current: Number(core.current.toFixed(1)), average: Number(core.average.toFixed(1)) }))}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="core" />
            <YAxis domain={[0, 100]} />
            <Tooltip />
            <Legend />
            <Bar dataKey="current" fill={colors[0]} isAnimationActive={false} />
            <Bar dataKey="average" fill={colors[2]} isAnimationActive={false} />
          </BarChart>
        </Chart>
        <Chart title="Services, memory (MB)" points={byTime.size} intervalS={overRange.interval_s}>
          <LineChart data={[...byTime.values()]}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="time" />
            <YAxis />
            <Tooltip />
            <Legend />
            {serviceNames.map((name, index) => (
              <Line key={name} type="monotone" dataKey={name} stroke={colors[index % colors.length]} dot={false} isAnimationActive={false} />
            ))}
          </LineChart>
        </Chart>
      </div>
      <div className="grid">
        <section className="card" aria-labelledby="disks-heading">
          <h2 id="disks-heading">Disks</h2>
          <div className="table-scroll">
            <table className="data">
              <thead>
                <tr>
                  <th>Mount</th>
                  <th>Device</th>
                  <th>Used of available</th>
                  <th>Free</th>
                </tr>
              </thead>
              <tbody>
                {stats.disks.length === 0 && <EmptyRow columns={4} text="Collecting data: no disk sample yet." />}
                {stats.disks.map((disk) => {
                  // What users can fill: used plus available (df's view; blocks reserved for root are in neither).
                  const usable = disk.current_used_gb + disk.current_free_gb;
                  const share = usable > 0 ? Math.round((disk.current_used_gb / usable) * 100) : 0;
                  return (
                    <tr key={disk.mounted_on}>
                      <td>{disk.mounted_on}</td>
                      <td>{disk.device}</td>
                      <td className={share > 90 ? "error" : undefined}>
                        {disk.current_used_gb} GB of {usable} GB ({share} %)
                      </td>
                      <td>{disk.current_free_gb} GB</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </section>
        <section className="card" aria-labelledby="networks-heading">
          <h2 id="networks-heading">Networks now</h2>
          <div className="table-scroll">
            <table className="data">
              <thead>
                <tr>
                  <th>Interface</th>
                  <th>Receiving</th>
                  <th>Sending</th>
                  <th>Drops / errors (24 h)</th>
                </tr>
              </thead>
              <tbody>
                {stats.networks.length === 0 && (
                  <EmptyRow columns={4} text="Collecting data: interfaces appear from the collector's second sample on." />
                )}
                {stats.networks.map((network) => (
                  <tr key={network.interface}>
                    <td>{network.interface}</td>
                    <td>{bitRate((network.current_rx_bytes * 8) / overRange.interval_s)}</td>
                    <td>{bitRate((network.current_tx_bytes * 8) / overRange.interval_s)}</td>
                    <td>
                      {network.total_rx_drops + network.total_tx_drops} / {network.total_rx_errors + network.total_tx_errors}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      </div>
    </>
  );
}

function EmptyRow({ columns, text }: { columns: number; text: string }) {
  return (
    <tr>
      <td colSpan={columns} className="muted">
        {text}
      </td>
    </tr>
  );
}
