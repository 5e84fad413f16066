import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { requireAdminSession } from "@/lib/admin-session/session";
import { CreateAccountForm } from "../account-forms";
import { accountFormOptions } from "../form-options";

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
