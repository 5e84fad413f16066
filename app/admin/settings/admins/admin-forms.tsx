"use client";

import { useState } from "react";
import { AdminForm, CheckboxField, InputField, useAdminAction, useAdminForm } from "@/components/form";
import { adminStatusSchema, changeOwnPasswordSchema, createAdminSchema, setPasswordSchema } from "@/lib/admins/schemas";
import { changeOwnPasswordAction, createAdminAction, resetAdminPasswordAction, resetAdminTwoFactorAction, setAdminStatusAction } from "./actions";

// The admins page's forms, on the shared form pattern: every refusal (a taken email, the last
// enabled admin, a wrong current password) is shown at its field.

const LIST = "/admin/settings/admins";

export function CreateAdminForm() {
  const { form, message, onSubmit } = useAdminForm({
    schema: createAdminSchema,
    defaultValues: { email: "", name: "", password: "" },
    save: createAdminAction,
    doneHref: LIST,
    done: (values) => `Admin ${values.email} created.`,
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Create" cancelHref={LIST}>
      <fieldset>
        <legend>Admin Details</legend>
        <InputField form={form} name="email" label="Email" type="email" autoComplete="off" />
        <InputField form={form} name="name" label="Name" autoComplete="off" />
        <InputField form={form} name="password" label="Password" type="password" autoComplete="new-password" hint="At least 10 characters." />
      </fieldset>
    </AdminForm>
  );
}

export function AdminStatusForm({ adminId, isEnabled }: { adminId: number; isEnabled: boolean }) {
  const { form, message, onSubmit } = useAdminForm({
    schema: adminStatusSchema,
    defaultValues: { is_enabled: isEnabled },
    save: (values) => setAdminStatusAction(adminId, values),
    doneHref: LIST,
    done: (values) => (values.is_enabled ? "Admin enabled." : "Admin disabled."),
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Save Status" cancelHref={LIST}>
      <fieldset>
        <legend>Status</legend>
        <CheckboxField
          form={form}
          name="is_enabled"
          label="Enabled"
          hint="A disabled admin cannot sign in; their open sessions end at once."
        />
      </fieldset>
    </AdminForm>
  );
}

/** Another admin's password, set without knowing the old one. */
export function ResetPasswordForm({ adminId }: { adminId: number }) {
  const { form, message, onSubmit } = useAdminForm({
    schema: setPasswordSchema,
    defaultValues: { password: "" },
    save: (values) => resetAdminPasswordAction(adminId, values),
    doneHref: LIST,
    done: () => "Password reset.",
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Reset Password">
      <fieldset>
        <legend>Reset Password</legend>
        <InputField
          form={form}
          name="password"
          label="New password"
          type="password"
          autoComplete="new-password"
          hint="At least 10 characters. The admin's open sessions end."
        />
      </fieldset>
    </AdminForm>
  );
}

/** The signed-in admin's own password: the current one is required. */
export function ChangeOwnPasswordForm() {
  const { form, message, onSubmit } = useAdminForm({
    schema: changeOwnPasswordSchema,
    defaultValues: { current_password: "", password: "" },
    save: changeOwnPasswordAction,
    doneHref: LIST,
    done: () => "Your password is changed.",
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Change Password">
      <fieldset>
        <legend>Change Your Password</legend>
        <InputField form={form} name="current_password" label="Current password" type="password" autoComplete="current-password" />
        <InputField
          form={form}
          name="password"
          label="New password"
          type="password"
          autoComplete="new-password"
          hint="At least 10 characters. Your sessions in other browsers end."
        />
      </fieldset>
    </AdminForm>
  );
}

/** Another admin's two-factor sign-in: its state, and its reset (a lost device) behind a confirmation. */
export function ResetTwoFactor({ admin }: { admin: { id: number; email: string; twoFactor: boolean } }) {
  const { pending, state, run } = useAdminAction();
  const [confirming, setConfirming] = useState(false);
  const [done, setDone] = useState(false);
  return (
    <section className="card" aria-labelledby="reset-two-factor-heading">
      <h2 id="reset-two-factor-heading">Two-factor sign-in</h2>
      {done ? (
        <p role="status">
          Two-factor sign-in of {admin.email} is off and their sessions have ended. They sign in with their password alone until they set it
          up again.
        </p>
      ) : admin.twoFactor ? (
        <p>
          On for {admin.email}. If they lost their device and their recovery codes, reset it: they then sign in with their password alone
          and set it up again.
        </p>
      ) : (
        <p className="muted">Off for {admin.email}: they sign in with their password alone. Each admin turns it on on their own Two-factor sign-in page.</p>
      )}
      {state?.error && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      {!done &&
        admin.twoFactor &&
        (confirming ? (
          <div className="notice">
            <p>
              Reset the two-factor sign-in of <strong>{admin.email}</strong>? Their authenticator app and recovery codes stop working and
              every session of theirs ends. The audit log records that you did it.
            </p>
            <button type="button" className="danger" disabled={pending} onClick={() => run(() => resetAdminTwoFactorAction(admin.id), () => setDone(true))}>
              Reset two-factor sign-in of {admin.email}
            </button>{" "}
            <button type="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        ) : (
          <button type="button" className="danger" onClick={() => setConfirming(true)}>
            Reset two-factor sign-in…
          </button>
        ))}
    </section>
  );
}
