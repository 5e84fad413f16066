import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { recordOr404 } from "@/app/admin/record-or-404";
import { requireAdminSession } from "@/lib/admin-session/session";
import { getPlan } from "@/lib/plans/service";
import { PlanForm } from "../../plan-form";

export const metadata: Metadata = { title: "Edit plan" };

export default async function EditPlanPage({ params }: { params: Promise<{ id: string }> }) {
  const { db } = await requireAdminSession();
  const { id, ...initial } = await recordOr404((await params).id, (id) => getPlan(db, id));
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Plans", href: "/admin/plans" }, { label: initial.name }]} />
      <h1>Edit plan “{initial.name}”</h1>
      <PlanForm planId={id} initial={initial} />
    </>
  );
}
