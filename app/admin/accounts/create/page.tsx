import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { CreateAccountForm } from "../account-forms";
import { accountFormOptions } from "../form-options";
import { requireAdminSession } from "@/lib/admin-session/session";

export const metadata: Metadata = { title: "Create hosting account" };

export default async function CreateAccountPage() {
  const { db } = await requireAdminSession();
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Hosting accounts", href: "/admin/accounts" }, { label: "Create" }]} />
      <h1>Create hosting account</h1>
      <CreateAccountForm {...await accountFormOptions(db)} />
    </>
  );
}
