import type { Metadata } from "next";
import { recordOr404 } from "@/app/admin/record-or-404";
import { accountOverview, accountVisitorDays } from "@/lib/accounts/overview";
import { requireAdminSession } from "@/lib/admin-session/session";
import { AccountHeader } from "./account-header";
import type { AccountPageProps } from "./account-page";
import { AccountOverview } from "./overview";

export const metadata: Metadata = { title: "Hosting account" };

// An account's page, its Overview tab: what it has and uses, what went wrong, read only; each
// line links to the tab where it is changed.
export default async function AccountOverviewPage({ params }: AccountPageProps) {
  const { db } = await requireAdminSession();
  const overview = await recordOr404((await params).id, (id) => accountOverview(db, id));
  const { account } = overview;
  // Read while the rest renders: GoAccess may take a moment on large logs.
  const visitors = accountVisitorDays(db, account);
  // Its failure is shown where it is awaited (the overview's Visitors); until then it is not unhandled.
  visitors.catch(() => undefined);
  return (
    <>
      <AccountHeader db={db} account={account} title={`Hosting account “${account.username}”`} />
      <AccountOverview overview={overview} visitors={visitors} />
    </>
  );
}
