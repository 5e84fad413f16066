"use client";

import { zodResolver } from "@hookform/resolvers/zod";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useForm } from "react-hook-form";
import type { z } from "zod";
import { createApiKeySchema, type CreateApiKeyInput } from "@/lib/api-keys/schemas";
import { addressOrCidrError } from "@/lib/net/ip-syntax";
import { createKeyAction, updateKeyAction } from "./actions";

type FormInput = z.input<typeof createApiKeySchema>;
type FormOutput = z.output<typeof createApiKeySchema>;

export interface EndpointGroup {
  tag: string;
  endpoints: { endpoint: string; summary: string }[];
}

interface Props {
  mode: "create" | "edit";
  keyId?: number;
  initial?: FormInput;
  endpointGroups: EndpointGroup[];
  resellers: { id: number; username: string }[];
  accounts: { id: number; username: string }[];
}

/** A new form's values (a fresh object each time: react-hook-form keeps what it is given). */
const blankKey = (): FormInput => ({
  name: "",
  is_enabled: true,
  allowed_ips: [],
  allow_all_endpoints: true,
  allowed_endpoints: [],
  scope: "admin",
  reseller_id: null,
  account_id: null,
});

function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        await navigator.clipboard.writeText(value);
        setCopied(true);
      }}
    >
      {copied ? "Copied" : `Copy ${label}`}
    </button>
  );
}

export function ApiKeyForm({ mode, keyId, initial, endpointGroups, resellers, accounts }: Props) {
  const router = useRouter();
  const [created, setCreated] = useState<{ name: string; key: string; secret: string } | null>(null);
  const [formMessage, setFormMessage] = useState<string | null>(null);
  const [showForm, setShowForm] = useState(true);
  const [newIp, setNewIp] = useState("");
  const [ipError, setIpError] = useState<string | null>(null);
  const form = useForm<FormInput, unknown, FormOutput>({
    resolver: zodResolver(createApiKeySchema),
    defaultValues: initial ?? blankKey(),
  });
  const { register, handleSubmit, watch, setError, reset, formState } = form;
  const { errors, isSubmitting } = formState;
  const allowAll = watch("allow_all_endpoints");
  const scope = watch("scope");
  // The address list is edited entry by entry here (each checked with the API's rule when
  // added) and joins the other values on submit.
  const [ips, setIps] = useState<string[]>(initial?.allowed_ips ?? []);

  function addIp() {
    const entry = newIp.trim();
    const error = entry ? addressOrCidrError(entry) : "Enter an address or CIDR range";
    if (error) return setIpError(error);
    setIps([...ips, entry]);
    setNewIp("");
    setIpError(null);
  }

  function showServerErrors(result: { error?: string; fieldErrors?: Record<string, string[]> } | null) {
    setFormMessage(result?.error ?? null);
    for (const [field, messages] of Object.entries(result?.fieldErrors ?? {})) {
      setError(field.split(".")[0] as keyof FormInput, { message: messages.join(" ") });
    }
  }

  async function submit(formValues: FormOutput, another: boolean) {
    const values = { ...formValues, allowed_ips: ips };
    if (mode === "edit") {
      const result = await updateKeyAction(keyId!, values as CreateApiKeyInput);
      if (result) return showServerErrors(result);
      router.push("/admin/settings/api-keys");
      router.refresh();
      return;
    }
    const result = await createKeyAction(values as CreateApiKeyInput);
    if (result && "created" in result) {
      setCreated(result.created);
      setFormMessage(null);
      setShowForm(another);
      if (another) {
        reset(blankKey());
        setIps([]);
      }
      return;
    }
    showServerErrors(result);
  }

  const fieldError = (message?: string) => message && <p className="error">{message}</p>;

  const createdPanel = created && (
    <section className="card" aria-label="New API key">
      <h2>API key “{created.name}” created</h2>
      <p className="notice">
        Copy the secret now. It is shown only this once: after you leave or reload this page it cannot be shown again,
        and a lost secret means creating a new key.
      </p>
      <div className="secret">
        <span>API Key</span>
        <code data-testid="created-key">{created.key}</code>
        <CopyButton value={created.key} label="key" />
      </div>
      <div className="secret">
        <span>API Secret</span>
        <code data-testid="created-secret">{created.secret}</code>
        <CopyButton value={created.secret} label="secret" />
      </div>
      <Link className="button" href="/admin/settings/api-keys">
        Back to API keys
      </Link>
    </section>
  );

  return (
    <>
      {createdPanel}
      {showForm && (
      <form onSubmit={handleSubmit((values) => submit(values, false))} noValidate>
        {formMessage && (
          <p className="alert" role="alert">
            {formMessage}
          </p>
        )}
        <fieldset>
          <legend>API Key Details</legend>
          <div className="field">
            <label htmlFor="name">Name</label>
            <input id="name" type="text" {...register("name")} aria-invalid={Boolean(errors.name)} />
            <p className="hint">Which integration uses it, e.g. “Billing system”.</p>
            {fieldError(errors.name?.message)}
          </div>
        </fieldset>

        <fieldset>
          <legend>Security Settings</legend>
          <label className="check">
            <input type="checkbox" {...register("is_enabled")} /> Enable API Key
          </label>
          <div className="field">
            <label htmlFor="new-ip">IP Restriction</label>
            <p className="hint">Leave empty to allow any address. One IPv4/IPv6 address or CIDR range per entry.</p>
            <ul aria-label="Allowed addresses">
              {ips.map((ip) => (
                <li key={ip} className="actions">
                  <code>{ip}</code>
                  <button type="button" onClick={() => setIps(ips.filter((entry) => entry !== ip))} aria-label={`Remove ${ip}`}>
                    Remove
                  </button>
                </li>
              ))}
            </ul>
            <div className="actions">
              <input
                id="new-ip"
                type="text"
                value={newIp}
                placeholder="203.0.113.7 or 10.0.0.0/8"
                onChange={(event) => setNewIp(event.target.value)}
                onKeyDown={(event) => {
                  if (event.key === "Enter") {
                    event.preventDefault();
                    addIp();
                  }
                }}
              />
              <button type="button" onClick={addIp}>
                Add
              </button>
            </div>
            {fieldError(ipError ?? errors.allowed_ips?.message ?? errors.allowed_ips?.[0]?.message)}
          </div>
        </fieldset>

        <fieldset>
          <legend>Endpoint Access</legend>
          <label className="check">
            <input type="checkbox" {...register("allow_all_endpoints")} /> Allow all endpoints
          </label>
          {!allowAll && (
            <div className="endpoints">
              {endpointGroups.map((group) => (
                <div key={group.tag} role="group" aria-label={group.tag}>
                  <h3 className="muted">{group.tag}</h3>
                  {group.endpoints.map(({ endpoint, summary }) => (
                    <label key={endpoint} className="check" title={summary}>
                      <input type="checkbox" value={endpoint} {...register("allowed_endpoints")} /> {endpoint}
                    </label>
                  ))}
                </div>
              ))}
            </div>
          )}
          {fieldError(errors.allowed_endpoints?.message)}
        </fieldset>

        <fieldset>
          <legend>Scope</legend>
          <div className="field">
            <label htmlFor="scope">Who the key acts for</label>
            <select id="scope" {...register("scope")}>
              <option value="admin">Admin (the whole server)</option>
              <option value="reseller">Reseller (its own accounts)</option>
              <option value="account">Hosting account (one account)</option>
            </select>
          </div>
          {scope === "reseller" && (
            <div className="field">
              <label htmlFor="reseller_id">Reseller</label>
              <select id="reseller_id" {...register("reseller_id", { setValueAs: (value) => (value ? Number(value) : null) })}>
                <option value="">Choose a reseller…</option>
                {resellers.map((reseller) => (
                  <option key={reseller.id} value={reseller.id}>
                    {reseller.username}
                  </option>
                ))}
              </select>
              {fieldError(errors.reseller_id?.message)}
            </div>
          )}
          {scope === "account" && (
            <div className="field">
              <label htmlFor="account_id">Hosting account</label>
              <select id="account_id" {...register("account_id", { setValueAs: (value) => (value ? Number(value) : null) })}>
                <option value="">Choose an account…</option>
                {accounts.map((account) => (
                  <option key={account.id} value={account.id}>
                    {account.username}
                  </option>
                ))}
              </select>
              {fieldError(errors.account_id?.message)}
            </div>
          )}
        </fieldset>

        <div className="actions">
          {mode === "create" ? (
            <>
              <button className="primary" type="submit" disabled={isSubmitting}>
                Create
              </button>
              <button type="button" disabled={isSubmitting} onClick={handleSubmit((values) => submit(values, true))}>
                Create &amp; create another
              </button>
            </>
          ) : (
            <button className="primary" type="submit" disabled={isSubmitting}>
              Save Changes
            </button>
          )}
          <Link className="button" href="/admin/settings/api-keys">
            Cancel
          </Link>
        </div>
      </form>
      )}
    </>
  );
}
