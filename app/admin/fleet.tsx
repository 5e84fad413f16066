import Link from "next/link";
import { Badge } from "@/components/status";
import { Time } from "@/components/time";
import { type Attention, DISK_FULL_RATIO, diskRatio } from "@/lib/nodes/fleet";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import type { NodeRecord } from "@/lib/nodes/service";

// The dashboard's top: what needs the admin now, then every node at a glance.

const gigabytes = (bytes: number) => `${(bytes / 1024 ** 3).toLocaleString("en-US", { maximumFractionDigits: 1 })} GB`;
const percent = (ratio: number) => `${Math.round(ratio * 100)} %`;
const nodeHref = (node: NodeRecord) => `/admin/nodes/${node.id}/edit`;
const accountHref = (accountId: number) => `/admin/accounts/${accountId}/edit`;

function AttentionItem({ item }: { item: Attention }) {
  switch (item.kind) {
    case "node_unreachable":
      return (
        <>
          <Badge tone="trouble">Unreachable</Badge> Node <Link href={nodeHref(item.node)}>{item.node.name}</Link>: no heartbeat since{" "}
          <Time at={item.node.last_heartbeat_at} empty="it joined" />. Its accounts&apos; changes wait for it.
        </>
      );
    case "node_not_joined":
      return (
        <>
          <Badge tone="trouble">Not joined</Badge> Node <Link href={nodeHref(item.node)}>{item.node.name}</Link> was added but its agent has not
          joined yet: run its join command on that machine.
        </>
      );
    case "node_outdated":
      return (
        <>
          <Badge tone="trouble">Outdated</Badge> Node <Link href={nodeHref(item.node)}>{item.node.name}</Link> runs agent{" "}
          {item.node.agent_version ?? "of an unknown version"}, older than the panel: update it.
        </>
      );
    case "disk_full":
      return (
        <>
          <Badge tone="trouble">Disk {percent(item.ratio)} full</Badge> Node <Link href={nodeHref(item.node)}>{item.node.name}</Link>: its homes&apos;
          disk has {gigabytes(item.node.disk!.used_bytes)} used of {gigabytes(item.node.disk!.total_bytes)}
          {item.node.name !== LOCAL_NODE && item.node.last_heartbeat_at && (
            <>
              {" "}
              (at its last heartbeat, <Time at={item.node.last_heartbeat_at} />)
            </>
          )}
          .
        </>
      );
    case "backup_failed":
      return (
        <>
          <Badge tone="trouble">Backup failed</Badge> <Link href={accountHref(item.account.account_id)}>{item.account.username}</Link>{" "}
          <Time at={item.account.last_failure_at} />: <span className="error">{item.account.last_error}</span>
        </>
      );
    case "account_flagged":
      return (
        <>
          <Badge tone="trouble">Flagged</Badge> <Link href={accountHref(item.account.account_id)}>{item.account.username}</Link>:{" "}
          {item.account.reason === "mail_limits" ? (
            <>
              its mail went over the plan&apos;s sending limits; lift the flag on its <Link href={`/admin/accounts/${item.account.account_id}/email`}>Email</Link> tab
              once you have looked.
            </>
          ) : (
            <>
              the last change for it failed on its node{item.account.error ? <span className="error"> ({item.account.error})</span> : null}.
            </>
          )}
        </>
      );
  }
}

const attentionKey = (item: Attention) =>
  "node" in item ? `${item.kind}-${item.node.id}` : `${item.kind}-${item.account.account_id}${"reason" in item.account ? `-${item.account.reason}` : ""}`;

export function NeedsAttention({ items }: { items: Attention[] }) {
  return (
    <section className="card" aria-labelledby="attention-heading">
      <h2 id="attention-heading">Needs you now</h2>
      {items.length === 0 ? (
        <p>
          <Badge tone="ok">All clear</Badge> Every node answers and is up to date, no home disk is over {percent(DISK_FULL_RATIO)}, no backup failed
          last night and no account is flagged.
        </p>
      ) : (
        <ul className="attention">
          {items.map((item) => (
            <li key={attentionKey(item)}>
              <AttentionItem item={item} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function NodeStateBadge({ node }: { node: NodeRecord }) {
  if (node.state === "unreachable") return <Badge tone="trouble">{node.enrolled ? "unreachable" : "waiting to join"}</Badge>;
  if (node.state === "outdated") return <Badge tone="trouble">outdated</Badge>;
  return <Badge tone={node.state === "active" ? "ok" : "neutral"}>{node.state}</Badge>;
}

function Disk({ node }: { node: NodeRecord }) {
  const ratio = diskRatio(node.disk);
  if (!node.disk || ratio === null) return <span className="muted">not reported</span>;
  return (
    <span className={ratio > DISK_FULL_RATIO ? "error" : undefined}>
      {gigabytes(node.disk.used_bytes)} of {gigabytes(node.disk.total_bytes)} ({percent(ratio)})
    </span>
  );
}

/** Every node: state, load, the disk of its homes, accounts, last heartbeat, agent version. */
export function FleetTable({ nodes }: { nodes: NodeRecord[] }) {
  return (
    <section className="card" aria-labelledby="fleet-heading">
      <h2 id="fleet-heading">
        Nodes{" "}
        <Link className="heading-link" href="/admin/nodes">
          Manage nodes
        </Link>
      </h2>
      <div className="table-scroll">
        <table className="data">
          <thead>
            <tr>
              <th>Node</th>
              <th>State</th>
              <th>Load (1, 5, 15 min)</th>
              <th>Disk of homes</th>
              <th>Accounts</th>
              <th>Last heartbeat</th>
              <th>Agent</th>
            </tr>
          </thead>
          <tbody>
            {nodes.map((node) => (
              <tr key={node.id}>
                <td data-label="Node">
                  <Link href={nodeHref(node)}>{node.name}</Link>
                </td>
                <td data-label="State">
                  <NodeStateBadge node={node} />
                </td>
                <td data-label="Load">{node.load?.map((value) => value.toFixed(2)).join(" · ") ?? <span className="muted">not reported</span>}</td>
                <td data-label="Disk of homes">
                  <Disk node={node} />
                </td>
                <td data-label="Accounts">{node.accounts}</td>
                <td data-label="Last heartbeat">
                  {node.name === LOCAL_NODE ? <span className="muted">this machine: measured now</span> : <Time at={node.last_heartbeat_at} empty="never" />}
                </td>
                <td data-label="Agent">{node.agent_version ?? <span className="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
