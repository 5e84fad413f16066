import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { requireAdminSession } from "@/lib/admin-session/session";
import { env } from "@/lib/env";
import { CreateNodeForm } from "../node-form";

export const metadata: Metadata = { title: "Add node" };

export default async function CreateNodePage() {
  await requireAdminSession();
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Nodes", href: "/admin/nodes" }, { label: "Add" }]} />
      <h1>Add node</h1>
      <CreateNodeForm natsUrl={env().nats?.url ?? null} />
    </>
  );
}
