"use client";

import { AdminForm, InputField, useAdminForm } from "@/components/form";
import { createAdminSchema } from "@/lib/admins/schemas";
import { createFirstAdmin } from "./actions";

/** The first admin's account; on success, on to sign in. */
export function SetupForm({ token }: { token: string }) {
  const { form, message, onSubmit } = useAdminForm({
    schema: createAdminSchema,
    defaultValues: { name: "", email: "", password: "" },
    save: (values) => createFirstAdmin(token, values),
    doneHref: "/login",
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Create admin">
      <InputField form={form} name="name" label="Name" autoComplete="name" />
      <InputField form={form} name="email" label="Email" type="email" autoComplete="username" />
      <InputField
        form={form}
        name="password"
        label="Password"
        type="password"
        autoComplete="new-password"
        hint="At least 10 characters."
      />
    </AdminForm>
  );
}
