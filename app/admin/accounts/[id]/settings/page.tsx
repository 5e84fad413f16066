import type { Metadata } from "next";
import { moveTargets } from "@/lib/moves/service";
import { getReseller } from "@/lib/resellers/service";
import { AccountAdminForm } from "../../account-forms";
import { accountFormOptions } from "../../form-options";
import { AccountHeader } from "../account-header";
import { accountOfPage, type AccountPageProps } from "../account-page";
import { AccountMove } from "./account-move";

export const metadata: Metadata = { title: "Settings" };

// What only the admin changes: plan and owner, SSH access, and the node the account lives on (its move).
export default async function AccountSettingsPage({ params }: AccountPageProps) {
  const { db, account } = await accountOfPage(params);
  const reseller = account.reseller_id === null ? null : await getReseller(db, account.reseller_id);
  return (
    <>
      <AccountHeader db={db} account={account} trail={[{ label: "Settings" }]} title={`Settings of “${account.username}”`} />
      <AccountAdminForm
        accountId={account.id}
        initial={{ plan: account.plan.name, reseller: reseller?.username ?? null, has_ssh_access: account.has_ssh_access }}
        {...await accountFormOptions(db)}
      />
      <AccountMove
        account={{ id: account.id, node: account.node }}
        move={account.move}
        targets={(await moveTargets(db)).filter((name) => name !== account.node)}
      />
    </>
  );
}
