import type { Metadata } from "next";
import Link from "next/link";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { recordOr404 } from "@/app/admin/record-or-404";
import { requireAdminSession } from "@/lib/admin-session/session";
import { getAdminUser } from "@/lib/admins/service";
import { AdminStatusForm, ChangeOwnPasswordForm, ResetPasswordForm, ResetTwoFactor } from "../../admin-forms";

export const metadata: Metadata = { title: "Edit admin" };

export default async function EditAdminPage({ params }: { params: Promise<{ id: string }> }) {
  const { admin: self, db } = await requireAdminSession();
  const admin = await recordOr404((await params).id, (id) => getAdminUser(db, id));
  const isSelf = admin.id === self.adminUserId;
  return (
    <>
      <Breadcrumbs trail={[{ label: "Settings" }, { label: "Security" }, { label: "Admins", href: "/admin/settings/admins" }, { label: admin.email }]} />
      <h1>
        Edit admin “{admin.email}”{isSelf && " (you)"}
      </h1>
      <AdminStatusForm adminId={admin.id} isEnabled={admin.is_enabled} />
      {isSelf ? <ChangeOwnPasswordForm /> : <ResetPasswordForm adminId={admin.id} />}
      {!isSelf && <ResetTwoFactor admin={{ id: admin.id, email: admin.email, twoFactor: admin.two_factor }} />}
      {isSelf && (
        <p>
          Your own two-factor sign-in: <Link href="/admin/settings/two-factor">{admin.two_factor ? "on" : "off"}</Link>.
        </p>
      )}
    </>
  );
}
