import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { requireAdminSession } from "@/lib/admin-session/session";
import { PlanForm } from "../plan-form";

export const metadata: Metadata = { title: "Create plan" };

export default async function CreatePlanPage() {
  await requireAdminSession();
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Plans", href: "/admin/plans" }, { label: "Create" }]} />
      <h1>Create plan</h1>
      <PlanForm />
    </>
  );
}
