import type { ReactNode } from "react";
import { StatusMessage } from "./status-message";

/** A page's title with its main action (e.g. "Create plan") at the right, then what the admin's last action did. */
export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <>
      <div className="page-header">
        <h1>{title}</h1>
        {children && <div className="actions">{children}</div>}
      </div>
      <StatusMessage />
    </>
  );
}
