import { redirect } from "next/navigation";
import { requireAdminSession } from "@/lib/admin-session/session";
import type { AccountPageProps } from "../account-page";
import { accountPaths } from "../paths";

// The account's page was once one long page at /edit; its parts are tabs now. Old links (and
// bookmarks) lead to the Overview, which links to every tab.
export default async function EditAccountPage({ params }: AccountPageProps) {
  await requireAdminSession();
  const { id } = await params;
  if (!/^[1-9][0-9]{0,9}$/.test(id)) redirect("/admin/accounts");
  redirect(accountPaths(Number(id)).overview);
}
