import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { requireAdminSession } from "@/lib/admin-session/session";
import { ApiKeyForm } from "../api-key-form";
import { keyFormOptions } from "../form-options";

export const metadata: Metadata = { title: "Create API key" };

export default async function CreateApiKeyPage() {
  const { db } = await requireAdminSession();
  return (
    <>
      <Breadcrumbs trail={[{ label: "Settings" }, { label: "Security" }, { label: "API Keys", href: "/admin/settings/api-keys" }, { label: "Create" }]} />
      <h1>Create API key</h1>
      <ApiKeyForm {...await keyFormOptions(db)} />
    </>
  );
}
