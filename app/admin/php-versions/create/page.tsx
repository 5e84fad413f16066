import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { requireAdminSession } from "@/lib/admin-session/session";
import { PhpVersionForm } from "../php-version-form";

export const metadata: Metadata = { title: "Add PHP version" };

export default async function CreatePhpVersionPage() {
  await requireAdminSession();
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "PHP versions", href: "/admin/php-versions" }, { label: "Add" }]} />
      <h1>Add PHP version</h1>
      <PhpVersionForm />
    </>
  );
}
