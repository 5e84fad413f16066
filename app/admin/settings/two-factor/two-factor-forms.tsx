"use client";

import Link from "next/link";
import { useState, useTransition } from "react";
import { AdminForm, InputField, useAdminForm } from "@/components/form";
import { confirmTwoFactorSchema, disableTwoFactorSchema } from "@/lib/admins/schemas";
import type { TwoFactorSetup } from "@/lib/admins/two-factor";
import { beginTwoFactorSetupAction, confirmTwoFactorSetupAction, disableTwoFactorAction } from "./actions";

const PAGE = "/admin/settings/two-factor";

/**
 * The page's one client component, so that what it shows once survives the re-render that
 * follows set-up (the new session cookie refreshes the page, which then says "on"): set-up in
 * three steps — a new secret (QR code and text), a code from it to confirm, then the ten recovery
 * codes — or, when on, the state and the form that turns it off.
 */
export function TwoFactorPanel({ email, enabled, recoveryCodesLeft }: { email: string; enabled: boolean; recoveryCodesLeft: number }) {
  const [setup, setSetup] = useState<TwoFactorSetup | null>(null);
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [starting, startTransition] = useTransition();
  const { form, message, onSubmit } = useAdminForm({
    schema: confirmTwoFactorSchema,
    defaultValues: { code: "" },
    save: confirmTwoFactorSetupAction,
    doneHref: PAGE,
    onSaved: (saved) => setRecoveryCodes(saved.recoveryCodes),
  });

  if (recoveryCodes) {
    return (
      <section className="card">
        <h2>Two-factor sign-in is on</h2>
        <p>
          Keep these recovery codes somewhere safe. Each one signs you in once instead of a code from the app; they are not
          shown again. Your other sessions have ended.
        </p>
        <ul className="recovery-codes" data-testid="recovery-codes">
          {recoveryCodes.map((code) => (
            <li key={code}>
              <code>{code}</code>
            </li>
          ))}
        </ul>
        <Link className="button primary" href="/admin">
          Continue
        </Link>
      </section>
    );
  }

  if (enabled) {
    return (
      <>
        <p>
          Two-factor sign-in is <strong>on</strong> for {email}. Recovery codes left: {recoveryCodesLeft}.
        </p>
        <DisableTwoFactorForm />
      </>
    );
  }

  if (!setup) {
    return (
      <>
        <p>
          Two-factor sign-in is <strong>off</strong> for {email}. Once on, signing in asks for a code from an authenticator
          app (TOTP) after your password. Links from SSO tokens still sign in without a code.
        </p>
        {problem && (
          <p className="alert" role="alert">
            {problem}
          </p>
        )}
        <button
          className="primary"
          type="button"
          disabled={starting}
          onClick={() =>
            startTransition(async () => {
              const result = await beginTwoFactorSetupAction();
              if (result && "saved" in result) setSetup(result.saved);
              else setProblem(result?.error ?? "Set-up could not start.");
            })
          }
        >
          Set up two-factor sign-in
        </button>
      </>
    );
  }

  return (
    <section className="card">
      <h2>Scan with your authenticator app</h2>
      {/* The SVG comes from the qrcode package on the server: paths only, no script. */}
      <div className="qr-code" role="img" aria-label="QR code of the two-factor secret" dangerouslySetInnerHTML={{ __html: setup.qrSvg }} />
      <p>
        Or enter this secret by hand (time-based, SHA-1, 6 digits, 30 seconds): <code data-testid="totp-secret">{setup.secret}</code>
      </p>
      <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Turn on two-factor sign-in">
        <InputField form={form} name="code" label="Code from the app" autoComplete="one-time-code" inputMode="numeric" />
      </AdminForm>
    </section>
  );
}

/** Turning one's own two-factor sign-in off: password and a current code (or a recovery code). */
function DisableTwoFactorForm() {
  const { form, message, onSubmit } = useAdminForm({
    schema: disableTwoFactorSchema,
    defaultValues: { password: "", code: "" },
    save: disableTwoFactorAction,
    doneHref: PAGE,
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Turn off two-factor sign-in">
      <fieldset>
        <legend>Turn Off</legend>
        <InputField form={form} name="password" label="Password" type="password" autoComplete="current-password" />
        <InputField form={form} name="code" label="Current code" autoComplete="one-time-code" hint="From your authenticator app, or a recovery code." />
      </fieldset>
    </AdminForm>
  );
}
