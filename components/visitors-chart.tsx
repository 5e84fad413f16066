"use client";

import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { VisitorDay } from "@/lib/accounts/overview";

/** Requests and visitors per day (the account's GoAccess report), oldest day first. */
export function VisitorsChart({ days }: { days: VisitorDay[] }) {
  return (
    <div style={{ width: "100%", height: 240 }} data-testid="visitors-chart">
      <ResponsiveContainer>
        <BarChart data={days}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="day" />
          <YAxis allowDecimals={false} />
          <Tooltip />
          <Legend />
          <Bar dataKey="requests" name="Requests" fill="#2456d6" isAnimationActive={false} />
          <Bar dataKey="visitors" name="Visitors" fill="#1e7d32" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
