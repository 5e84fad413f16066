"use client";

import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { MetricsHistoryRecord, MetricsStats, ServiceHistoryRecord } from "@/lib/metrics/service";
import { formatClock, useTimeZone, zoneName } from "./time";
const colors = ["#2456d6", "#d6453d", "#1e7d32", "#a0620a", "#7b3fb3", "#0b7d8c"];

function Chart({ title, children }: { title: string; children: React.ReactElement }) {
  return (
    <section className="card" aria-label={title}>
      <h2>{title}</h2>
      <div style={{ width: "100%", height: 240 }}>
        <ResponsiveContainer>{children}</ResponsiveContainer>
      </div>
    </section>
  );
}

export function MetricsCharts({
  history,
  stats,
  services,
}: {
  history: MetricsHistoryRecord[];
  stats: MetricsStats;
  services: ServiceHistoryRecord[];
}) {
  // The axes show clock times in the admin's time zone, named once above the charts.
  const zone = useTimeZone();
  const time = (timestamp: number) => formatClock(timestamp, zone);
  const cpuRam = [...history].reverse().map((sample) => ({
    time: time(sample.timestamp),
    CPU: Number(sample.cpu_percent.toFixed(1)),
    RAM: Number(sample.ram_percent.toFixed(1)),
  }));
  const serviceNames = [...new Set(services.map((row) => row.service_name))];
  const byTime = new Map<number, Record<string, number | string>>();
  for (const row of [...services].reverse()) {
    const point = byTime.get(row.timestamp) ?? { time: time(row.timestamp) };
    point[row.service_name] = Number(row.memory_mb.toFixed(1));
    byTime.set(row.timestamp, point);
  }
  return (
    <>
      <p className="muted">Times in {zoneName(zone)} ({zone}).</p>
      <div className="grid">
        <Chart title="CPU and RAM (%)">
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
        <Chart title="CPU cores, current (%)">
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
        <Chart title="Services, memory (MB)">
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
        <section className="card">
          <h2>Disks</h2>
          <table className="data">
            <thead>
              <tr>
                <th>Mount</th>
                <th>Device</th>
                <th>Used</th>
                <th>Free</th>
              </tr>
            </thead>
            <tbody>
              {stats.disks.length === 0 && <EmptyRow columns={4} text="No disk samples yet." />}
              {stats.disks.map((disk) => (
                <tr key={disk.mounted_on}>
                  <td>{disk.mounted_on}</td>
                  <td>{disk.device}</td>
                  <td>
                    {disk.current_used_gb} / {disk.current_total_gb} GB ({disk.current_used_percentage} %)
                  </td>
                  <td>{disk.current_free_gb} GB</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
        <section className="card">
          <h2>Networks (per sampling interval)</h2>
          <table className="data">
            <thead>
              <tr>
                <th>Interface</th>
                <th>Received</th>
                <th>Sent</th>
                <th>Drops / errors</th>
              </tr>
            </thead>
            <tbody>
              {stats.networks.length === 0 && (
                <EmptyRow columns={4} text="No traffic measured yet: interfaces appear from the collector's second sample on." />
              )}
              {stats.networks.map((network) => (
                <tr key={network.interface}>
                  <td>{network.interface}</td>
                  <td>{(network.current_rx_bytes / 1024).toFixed(1)} KiB</td>
                  <td>{(network.current_tx_bytes / 1024).toFixed(1)} KiB</td>
                  <td>
                    {network.total_rx_drops + network.total_tx_drops} / {network.total_rx_errors + network.total_tx_errors}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
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
