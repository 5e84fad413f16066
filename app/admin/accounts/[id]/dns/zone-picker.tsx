"use client";

import { useRouter } from "next/navigation";

/** Which of the account's zones the page shows (its domains): changing it shows that zone's records. */
export function ZonePicker({ path, zones, current }: { path: string; zones: { id: number; domain: string }[]; current: number }) {
  const router = useRouter();
  return (
    <div className="field">
      <label htmlFor="zone">Zone</label>
      <select id="zone" value={current} onChange={(event) => router.push(`${path}?domain=${event.target.value}`)}>
        {zones.map((zone) => (
          <option key={zone.id} value={zone.id}>
            {zone.domain}
          </option>
        ))}
      </select>
    </div>
  );
}
