import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";

/** What Next.js hands each page of one account: the `[id]` of its URL and its query. */
export interface AccountPageProps {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}

/** The signed-in admin's database and the account the page's `[id]` names (the 404 page when there is none). */
export async function accountOfPage(params: AccountPageProps["params"]) {
  const { db } = await requireAdminSession();
  const account = await recordOr404((await params).id, (id) => getAccount(db, id));
  return { db, account };
}
