import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { PlanForm } from "../plan-form";

export const metadata: Metadata = { title: "Create plan" };

export default function CreatePlanPage() {
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Plans", href: "/admin/plans" }, { label: "Create" }]} />
      <h1>Create plan</h1>
      <PlanForm />
    </>
  );
}
