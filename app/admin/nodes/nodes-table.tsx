"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { DataTable } from "@/components/data-table";
import { Time } from "@/components/time";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import type { NodeRecord } from "@/lib/nodes/service";

const gigabytes = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GB`;

/** A node's state, drawn as trouble when it is: unreachable or outdated. */
function NodeState({ node }: { node: NodeRecord }) {
  const trouble = node.state === "unreachable" || node.state === "outdated";
  const label = node.state === "unreachable" && !node.enrolled ? "waiting to join" : node.state;
  return <span className={trouble ? "error" : undefined}>{label}</span>;
}

const columns: ColumnDef<NodeRecord, unknown>[] = [
  { header: "Name", cell: ({ row }) => <strong>{row.original.name}</strong> },
  { header: "IPv4", cell: ({ row }) => row.original.ipv4 ?? "—" },
  { header: "State", cell: ({ row }) => <NodeState node={row.original} /> },
  { header: "Accounts", cell: ({ row }) => row.original.accounts },
  {
    header: "Disk",
    cell: ({ row }) => (row.original.disk ? `${gigabytes(row.original.disk.used_bytes)} of ${gigabytes(row.original.disk.total_bytes)}` : "—"),
  },
  { header: "Load", cell: ({ row }) => row.original.load?.map((value) => value.toFixed(2)).join(" ") ?? "—" },
  { header: "Agent", cell: ({ row }) => row.original.agent_version ?? "—" },
  {
    header: "Last heartbeat",
    cell: ({ row }) =>
      row.original.name === LOCAL_NODE ? (
        <span className="muted" title="The panel does this machine's work itself, with no agent: there is nothing to send a heartbeat.">
          none: the panel&apos;s own machine
        </span>
      ) : (
        <Time at={row.original.last_heartbeat_at} />
      ),
  },
  {
    header: "Actions",
    cell: ({ row }) => (
      <Link className="button" href={`/admin/nodes/${row.original.id}/edit`} aria-label={`Edit ${row.original.name}`}>
        Edit
      </Link>
    ),
  },
];

export function NodesTable(props: { rows: NodeRecord[]; total: number; page: number; perPage: number; search: string }) {
  const empty = props.search ? <p>No node matches “{props.search}”.</p> : <p>No nodes.</p>;
  return <DataTable columns={columns} searchLabel="Search nodes by name or address" empty={empty} {...props} />;
}
