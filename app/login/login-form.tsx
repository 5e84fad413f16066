"use client";

import { signIn } from "next-auth/react";
import { useState } from "react";
import { AdminForm, InputField, useAdminForm } from "@/components/form";
import { signInSchema, TWO_FACTOR_REQUIRED } from "@/lib/admins/schemas";

/**
 * Email and password through next-auth's credentials provider; on success, `next` (an admin page).
 * When the server answers that this admin has two-factor sign-in, a code field appears and the
 * form is sent again with email, password and code together (no session exists in between).
 */
export function LoginForm({ next }: { next: string }) {
  const [askCode, setAskCode] = useState(false);
  const { form, message, onSubmit } = useAdminForm({
    schema: signInSchema,
    defaultValues: { email: "", password: "", code: "" },
    save: async (values) => {
      const result = await signIn("credentials", { ...values, code: values.code ?? "", redirect: false });
      if (result?.ok) return null;
      if (result?.error === TWO_FACTOR_REQUIRED) {
        setAskCode(true);
        return { error: "Enter the code from your authenticator app, or one of your recovery codes." };
      }
      return { error: result?.error && result.error !== "CredentialsSignin" ? result.error : "Wrong email or password." };
    },
    doneHref: next,
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel={askCode ? "Verify" : "Sign in"}>
      <InputField form={form} name="email" label="Email" type="email" autoComplete="username" />
      <InputField form={form} name="password" label="Password" type="password" autoComplete="current-password" />
      {askCode && (
        <InputField
          form={form}
          name="code"
          label="Two-factor code"
          autoComplete="one-time-code"
          hint="The six digits your authenticator app shows, or one of your recovery codes."
        />
      )}
    </AdminForm>
  );
}
