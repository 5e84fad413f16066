import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { requireAdminSessionForTwoFactor } from "@/lib/admin-session/session";
import { twoFactorStatus } from "@/lib/admins/two-factor";
import { TwoFactorPanel } from "./two-factor-forms";

export const metadata: Metadata = { title: "Two-factor sign-in" };

// The signed-in admin's own two-factor sign-in. Open to a session that must set it up first
// (ADMIN_2FA_REQUIRED): it shows nothing but that admin's own state.
export default async function TwoFactorPage() {
  const { admin, db } = await requireAdminSessionForTwoFactor();
  const status = await twoFactorStatus(db, admin.adminUserId);
  return (
    <>
      <Breadcrumbs trail={[{ label: "Settings" }, { label: "Security" }, { label: "Two-factor sign-in" }]} />
      <h1>Two-factor sign-in</h1>
      {admin.mustSetUpTwoFactor && (
        <p className="alert" role="status">
          This panel requires two-factor sign-in for every admin. Set it up to continue.
        </p>
      )}
      <TwoFactorPanel email={admin.email} enabled={status.enabled} recoveryCodesLeft={status.recoveryCodesLeft} />
    </>
  );
}
