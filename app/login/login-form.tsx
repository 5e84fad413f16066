"use client";

import { signIn } from "next-auth/react";
import { AdminForm, InputField, useAdminForm } from "@/components/form";
import { signInSchema } from "@/lib/admins/schemas";

/** Email and password through next-auth's credentials provider; on success, `next` (an admin page). */
export function LoginForm({ next }: { next: string }) {
  const { form, message, onSubmit } = useAdminForm({
    schema: signInSchema,
    defaultValues: { email: "", password: "" },
    save: async (values) => {
      const result = await signIn("credentials", { ...values, redirect: false });
      if (result?.ok) return null;
      return { error: result?.error && result.error !== "CredentialsSignin" ? result.error : "Wrong email or password." };
    },
    doneHref: next,
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Sign in">
      <InputField form={form} name="email" label="Email" type="email" autoComplete="username" />
      <InputField form={form} name="password" label="Password" type="password" autoComplete="current-password" />
    </AdminForm>
  );
}
