import type { Metadata } from "next";
import Link from "next/link";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { PageHeader } from "@/components/page-header";
import { requireAdminSession } from "@/lib/admin-session/session";
import { listQueryFromUrl } from "@/lib/list-query";
import { listNodesPage } from "@/lib/nodes/service";
import { NodesTable } from "./nodes-table";

export const metadata: Metadata = { title: "Nodes" };

export default async function NodesPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { db } = await requireAdminSession();
  const query = listQueryFromUrl(await searchParams);
  const { rows, total } = await listNodesPage(db, query);
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Nodes" }]} />
      <PageHeader title="Nodes">
        <Link className="button primary" href="/admin/nodes/create">
          Add node
        </Link>
      </PageHeader>
      <p className="muted">
        The servers that host accounts. <strong>local</strong> is this panel&apos;s own machine: the panel does its work itself, with no
        agent, so it sends no heartbeat (it is up whenever this page answers). Every other node runs an agent that takes its work from the
        panel and beats every few seconds. A draining node takes no new accounts.
      </p>
      <NodesTable rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
