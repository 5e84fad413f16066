"use client";

import { AdminForm, CheckboxField, InputField, useAdminForm } from "@/components/form";
import { adminStatusSchema, changeOwnPasswordSchema, createAdminSchema, setPasswordSchema } from "@/lib/admins/schemas";
import { changeOwnPasswordAction, createAdminAction, resetAdminPasswordAction, setAdminStatusAction } from "./actions";

// The admins page's forms, on the shared form pattern: every refusal (a taken email, the last
// enabled admin, a wrong current password) is shown at its field.

const LIST = "/admin/settings/admins";

export function CreateAdminForm() {
  const { form, message, onSubmit } = useAdminForm({
    schema: createAdminSchema,
    defaultValues: { email: "", name: "", password: "" },
    save: createAdminAction,
    doneHref: LIST,
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
