import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { recordOr404 } from "@/app/admin/record-or-404";
import { requireAdminSession } from "@/lib/admin-session/session";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { moveTargets, nodeMoves } from "@/lib/moves/service";
import { getNode } from "@/lib/nodes/service";
import { EditNodeForm } from "../../node-form";
import { NodeMoves } from "./node-moves";
import { RevokeNode } from "./revoke-node";

export const metadata: Metadata = { title: "Edit node" };

export default async function EditNodePage({ params }: { params: Promise<{ id: string }> }) {
  const { db } = await requireAdminSession();
  const node = await recordOr404((await params).id, (id) => getNode(db, id));
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Nodes", href: "/admin/nodes" }, { label: node.name }]} />
      <h1>Edit node “{node.name}”</h1>
      {(node.state === "unreachable" || node.state === "outdated") && (
        <p className="alert" role="alert">
          {node.state === "outdated"
            ? "Its agent is older than this panel: it gets no work until it is updated (update the panel's files on that machine and restart its agent)."
            : node.enrolled
              ? "Its agent has not been heard from: changes to its accounts wait (suspend, unsuspend, terminate) or are refused until it is back. Check that `npm run panel -- node agent` runs there."
              : "It has not joined yet: run the command shown when it was added, on that machine."}
        </p>
      )}
      <EditNodeForm nodeId={node.id} initial={{ name: node.name, ipv4: node.ipv4 ?? "", ssh_host: node.ssh_host, state: node.draining ? "draining" : "active" }} joined={node.enrolled} />
      <NodeMoves
        node={{ id: node.id, name: node.name, accounts: node.accounts }}
        moves={await nodeMoves(db, node.id)}
        targets={(await moveTargets(db)).filter((name) => name !== node.name)}
      />
      {node.name !== LOCAL_NODE && <RevokeNode node={{ id: node.id, name: node.name, accounts: node.accounts }} />}
    </>
  );
}
