"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import { CopyButton } from "@/components/copy-button";
import { AdminForm, InputField, useAdminForm } from "@/components/form";
import { confirmTwoFactorSchema, disableTwoFactorSchema, renewRecoveryCodesSchema } from "@/lib/admins/schemas";
import type { TwoFactorSetup } from "@/lib/admins/two-factor";
import { beginTwoFactorSetupAction, cancelTwoFactorSetupAction, confirmTwoFactorSetupAction, disableTwoFactorAction, renewRecoveryCodesAction } from "./actions";

const PAGE = "/admin/settings/two-factor";

/** A base32 secret as an authenticator app's "enter a key" field is easiest typed from: groups of four. */
const inFours = (secret: string) => secret.match(/.{1,4}/g)?.join(" ") ?? secret;

/**
 * The page's one client component, so that what it shows once survives the re-render that
 * follows set-up (the new session cookie refreshes the page, which then says "on"): set-up in
 * three steps — a new secret (QR code and text), a code from it to confirm, then the ten recovery
 * codes — or, when on, the state, new recovery codes, and the form that turns it off.
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
        <p>Your other sessions have ended.</p>
        <RecoveryCodes email={email} codes={recoveryCodes} />
        <Link className="button primary" href="/admin">
          Continue
        </Link>
      </section>
    );
  }

  if (enabled) return <TwoFactorOn email={email} recoveryCodesLeft={recoveryCodesLeft} />;

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

  const cancel = () =>
    startTransition(async () => {
      const result = await cancelTwoFactorSetupAction();
      setProblem(result?.error ?? null);
      form.reset();
      setSetup(null);
    });
  return (
    <section className="card">
      <h2>Scan with your authenticator app</h2>
      {/* The SVG comes from the qrcode package on the server: paths only, no script. */}
      <div className="qr-code" role="img" aria-label="QR code of the two-factor secret" dangerouslySetInnerHTML={{ __html: setup.qrSvg }} />
      <p>Or enter this secret by hand (time-based, SHA-1, 6 digits, 30 seconds):</p>
      <div className="secret">
        <code data-testid="totp-secret">{inFours(setup.secret)}</code>
        <CopyButton value={setup.secret} label="secret" />
      </div>
      <AdminForm
        form={form}
        message={message}
        onSubmit={onSubmit}
        submitLabel="Turn on two-factor sign-in"
        moreButtons={
          <button type="button" onClick={cancel} disabled={starting}>
            Cancel
          </button>
        }
      >
        <InputField form={form} name="code" label="Code from the app" autoComplete="one-time-code" inputMode="numeric" />
      </AdminForm>
    </section>
  );
}

/** Ten recovery codes, shown this once: to copy or to download as a text file. */
function RecoveryCodes({ email, codes }: { email: string; codes: string[] }) {
  const text = `Recovery codes of ${email} for the Hosting Panel (each signs in once):\n${codes.join("\n")}\n`;
  return (
    <>
      <p>
        Keep these recovery codes somewhere safe. Each one signs you in once instead of a code from the app; they are not shown
        again.
      </p>
      <ul className="recovery-codes" data-testid="recovery-codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <p className="actions">
        <CopyButton value={codes.join("\n")} label="codes" />
        <a className="button" download="hosting-panel-recovery-codes.txt" href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`}>
          Download codes
        </a>
      </p>
    </>
  );
}

/** Two-factor sign-in is on: new recovery codes, or turning it off, each behind its button (both ask for the password and a code). */
function TwoFactorOn({ email, recoveryCodesLeft }: { email: string; recoveryCodesLeft: number }) {
  const router = useRouter();
  const [open, setOpen] = useState<"renew" | "off" | null>(null);
  // Closing reads the page again: the count of recovery codes left may have changed.
  const close = () => {
    setOpen(null);
    router.refresh();
  };
  return (
    <>
      <p>
        Two-factor sign-in is <strong>on</strong> for {email}. Recovery codes left: {recoveryCodesLeft}.
      </p>
      {open === null && (
        <p className="actions">
          <button type="button" onClick={() => setOpen("renew")}>
            Make new recovery codes…
          </button>
          <button type="button" className="danger" onClick={() => setOpen("off")}>
            Turn off two-factor sign-in…
          </button>
        </p>
      )}
      {open === "renew" && <RenewRecoveryCodesForm email={email} close={close} />}
      {open === "off" && <DisableTwoFactorForm close={close} />}
    </>
  );
}

const closeButton = (close: () => void, label = "Cancel") => (
  <button type="button" onClick={close}>
    {label}
  </button>
);

/** New recovery codes (the old ones stop working): password and a current code, as for turning it off. */
function RenewRecoveryCodesForm({ email, close }: { email: string; close: () => void }) {
  const [codes, setCodes] = useState<string[] | null>(null);
  const { form, message, onSubmit } = useAdminForm({
    schema: renewRecoveryCodesSchema,
    defaultValues: { password: "", code: "" },
    save: renewRecoveryCodesAction,
    doneHref: PAGE,
    onSaved: (saved) => {
      form.reset();
      setCodes(saved.recoveryCodes);
    },
  });
  if (codes) {
    return (
      <section className="card" aria-labelledby="new-codes-heading">
        <h2 id="new-codes-heading">New recovery codes</h2>
        <RecoveryCodes email={email} codes={codes} />
        {closeButton(close, "Done")}
      </section>
    );
  }
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Make new recovery codes" moreButtons={closeButton(close)}>
      <fieldset>
        <legend>New Recovery Codes</legend>
        <p className="hint">When yours are used up or may have been seen: ten new ones, and the old ones stop working.</p>
        <InputField form={form} name="password" label="Password" type="password" autoComplete="current-password" />
        <InputField form={form} name="code" label="Current code" autoComplete="one-time-code" hint="From your authenticator app, or a recovery code." />
      </fieldset>
    </AdminForm>
  );
}

/** Turning one's own two-factor sign-in off: password and a current code (or a recovery code). */
function DisableTwoFactorForm({ close }: { close: () => void }) {
  const { form, message, onSubmit } = useAdminForm({
    schema: disableTwoFactorSchema,
    defaultValues: { password: "", code: "" },
    save: disableTwoFactorAction,
    doneHref: PAGE,
    done: () => "Two-factor sign-in is off.",
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Turn off two-factor sign-in" moreButtons={closeButton(close)}>
      <fieldset>
        <legend>Turn Off</legend>
        <InputField form={form} name="password" label="Password" type="password" autoComplete="current-password" />
        <InputField form={form} name="code" label="Current code" autoComplete="one-time-code" hint="From your authenticator app, or a recovery code." />
      </fieldset>
    </AdminForm>
  );
}
