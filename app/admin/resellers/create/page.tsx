import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { requireAdminSession } from "@/lib/admin-session/session";
import { ResellerForm } from "../reseller-form";

export const metadata: Metadata = { title: "Create reseller" };

export default async function CreateResellerPage() {
  await requireAdminSession();
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Resellers", href: "/admin/resellers" }, { label: "Create" }]} />
      <h1>Create reseller</h1>
      <ResellerForm />
    </>
  );
}
