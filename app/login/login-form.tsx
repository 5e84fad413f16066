"use client";

import { signIn } from "next-auth/react";
import { useState } from "react";
import { AdminForm, InputField, useAdminForm } from "@/components/form";
import { signInSchema, TWO_FACTOR_REQUIRED, TWO_FACTOR_WRONG } from "@/lib/admins/schemas";

/**
 * Email and password through next-auth's credentials provider; on success, `next` (an admin page).
 * When the server answers that this admin has two-factor sign-in, the form's second step asks for
 * the code, and the form is sent again with email, password and code together (no session exists
 * in between); a wrong code is refused at its field.
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
        return {};
      }
      if (result?.error === TWO_FACTOR_WRONG) return { error: TWO_FACTOR_WRONG, fieldErrors: { code: ["is wrong or was already used"] } };
      return { error: result?.error && result.error !== "CredentialsSignin" ? result.error : "Wrong email or password." };
    },
    doneHref: next,
  });
  const back = () => {
    form.setValue("code", "");
    form.clearErrors();
    setAskCode(false);
  };
  return (
    <AdminForm
      form={form}
      message={message}
      onSubmit={onSubmit}
      submitLabel={askCode ? "Verify" : "Sign in"}
      moreButtons={
        askCode && (
          <button type="button" onClick={back}>
            Back
          </button>
        )
      }
    >
      {askCode ? (
        <section aria-labelledby="code-step-heading">
          <h2 id="code-step-heading">Two-factor sign-in</h2>
          <p>
            Signing in as <strong>{form.getValues("email")}</strong>. Enter the code your authenticator app shows for this panel.
          </p>
          <InputField
            form={form}
            name="code"
            label="Two-factor code"
            autoComplete="one-time-code"
            autoFocus
            hint="The six digits of your authenticator app, or one of your recovery codes."
          />
        </section>
      ) : (
        <>
          <InputField form={form} name="email" label="Email" type="email" autoComplete="username" />
          <InputField form={form} name="password" label="Password" type="password" autoComplete="current-password" />
        </>
      )}
    </AdminForm>
  );
}
