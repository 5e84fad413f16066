"use client";

import type { BackupRun } from "@/lib/backups/service";
import { Time, useFormatTime } from "@/components/time";

/** Restore points, newest first: when, which databases, and a button each (`action`…) that picks one. */
export function RestorePointsTable({
  label,
  restorePoints,
  action,
  onPick,
}: {
  label: string;
  restorePoints: BackupRun[];
  action: string;
  onPick: (restorePoint: BackupRun) => void;
}) {
  const formatTime = useFormatTime();
  return (
    <div className="table-scroll">
      <table className="data" aria-label={label}>
        <thead>
          <tr>
            <th>Time</th>
            <th>Databases</th>
            <th aria-label="Actions" />
          </tr>
        </thead>
        <tbody>
          {restorePoints.length === 0 && (
            <tr>
              <td colSpan={3} className="muted">
                No restore points yet.
              </td>
            </tr>
          )}
          {restorePoints.map((restorePoint) => (
            <tr key={restorePoint.id}>
              <td>
                <Time at={restorePoint.time} />
              </td>
              <td>{restorePoint.databases.length ? restorePoint.databases.join(", ") : <span className="muted">none</span>}</td>
              <td>
                <button type="button" aria-label={`${action} from ${formatTime(restorePoint.time)}`} onClick={() => onPick(restorePoint)}>
                  {action}…
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
