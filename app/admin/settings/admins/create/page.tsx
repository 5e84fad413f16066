import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { requireAdminSession } from "@/lib/admin-session/session";
import { CreateAdminForm } from "../admin-forms";

export const metadata: Metadata = { title: "Create admin" };

export default async function CreateAdminPage() {
  await requireAdminSession();
  return (
    <>
      <Breadcrumbs trail={[{ label: "Settings" }, { label: "Security" }, { label: "Admins", href: "/admin/settings/admins" }, { label: "Create" }]} />
      <h1>Create admin</h1>
      <CreateAdminForm />
    </>
  );
}
