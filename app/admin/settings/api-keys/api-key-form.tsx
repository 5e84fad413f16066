"use client";

import Link from "next/link";
import { useState } from "react";
import { useController } from "react-hook-form";
import type { z } from "zod";
import {
  AdminForm,
  type AnyForm,
  CheckboxField,
  describedBy,
  FieldFrame,
  InputField,
  numberOrNull,
  SelectField,
  useAdminForm,
  usePendingEntry,
} from "@/components/form";
import { createApiKeySchema } from "@/lib/api-keys/schemas";
import { CopyButton } from "@/components/copy-button";
import { addressOrCidrError } from "@/lib/net/ip-syntax";
import { createKeyAction, type NewKey, updateKeyAction } from "./actions";

type KeyInput = z.input<typeof createApiKeySchema>;
type KeyForm = AnyForm<KeyInput>;

export interface EndpointGroup {
  tag: string;
  endpoints: { endpoint: string; summary: string }[];
}

interface Props {
  keyId?: number;
  initial?: KeyInput;
  endpointGroups: EndpointGroup[];
  resellers: { id: number; username: string }[];
  accounts: { id: number; username: string }[];
}

const LIST = "/admin/settings/api-keys";

/** A new key's values (a fresh object each time: react-hook-form keeps what it is given). */
const blankKey = (): KeyInput => ({
  name: "",
  is_enabled: true,
  allowed_ips: [],
  allow_all_endpoints: true,
  allowed_endpoints: [],
  scope: "admin",
  reseller_id: null,
  account_id: null,
});

const choices = (choose: string, records: { id: number; username: string }[]) => [
  { value: "", label: choose },
  ...records.map(({ id, username }) => ({ value: String(id), label: username })),
];

/**
 * Create and edit of a key. After a create the new key and its secret are shown, this once;
 * "Create" puts the form away, "Create & create another" empties it for the next key.
 */
export function ApiKeyForm({ keyId, initial, endpointGroups, resellers, accounts }: Props) {
  const [created, setCreated] = useState<{ key: NewKey; another: boolean } | null>(null);
  const { form, message, onSubmit } = useAdminForm({
    schema: createApiKeySchema,
    defaultValues: initial ?? blankKey(),
    save: (values) => (keyId ? updateKeyAction(keyId, values) : createKeyAction(values)),
    doneHref: LIST,
    onSaved: (key, button) => {
      setCreated({ key, another: button === "another" });
      form.reset(blankKey());
    },
  });
  const scope = form.watch("scope");
  return (
    <>
      {created && <CreatedKey key={created.key.key} created={created.key} />}
      {(!created || created.another) && (
        <AdminForm
          form={form}
          message={message}
          onSubmit={onSubmit}
          submitLabel={keyId ? "Save Changes" : "Create"}
          moreButtons={
            !keyId && (
              <button type="submit" name="another" disabled={form.formState.isSubmitting}>
                Create &amp; create another
              </button>
            )
          }
          cancelHref={LIST}
        >
          <fieldset>
            <legend>API Key Details</legend>
            <InputField form={form} name="name" label="Name" hint="Which integration uses it, e.g. “Billing system”." />
          </fieldset>
          <fieldset>
            <legend>Security Settings</legend>
            <CheckboxField form={form} name="is_enabled" label="Enable API Key" />
            <IpRestrictionField form={form} />
          </fieldset>
          <fieldset>
            <legend>Endpoint Access</legend>
            <CheckboxField form={form} name="allow_all_endpoints" label="Allow all endpoints" />
            {!form.watch("allow_all_endpoints") && <EndpointChecklist form={form} groups={endpointGroups} />}
          </fieldset>
          <fieldset>
            <legend>Scope</legend>
            <SelectField
              form={form}
              name="scope"
              label="Who the key acts for"
              choices={[
                { value: "admin", label: "Admin (the whole server)" },
                { value: "reseller", label: "Reseller (its own accounts)" },
                { value: "account", label: "Hosting account (one account)" },
              ]}
            />
            {scope === "reseller" && (
              <SelectField
                form={form}
                name="reseller_id"
                label="Reseller"
                choices={choices("Choose a reseller…", resellers)}
                options={numberOrNull}
              />
            )}
            {scope === "account" && (
              <SelectField
                form={form}
                name="account_id"
                label="Hosting account"
                choices={choices("Choose an account…", accounts)}
                options={numberOrNull}
              />
            )}
          </fieldset>
        </AdminForm>
      )}
    </>
  );
}

/**
 * The address list, edited entry by entry; each entry is checked with the API's rule as it is
 * added. An address typed but not added is added on submit, or refused there (a key must never
 * be wider than what was typed).
 */
function IpRestrictionField({ form }: { form: KeyForm }) {
  const { field, fieldState } = useController({ control: form.control, name: "allowed_ips" });
  const ips = field.value ?? [];
  const [entry, setEntry] = useState("");
  const error = fieldState.error?.message;
  function add(): boolean {
    const ip = entry.trim();
    const problem = ip ? addressOrCidrError(ip) : "Enter an address or CIDR range";
    if (problem) {
      form.setError("allowed_ips", { message: problem }, { shouldFocus: true });
      return false;
    }
    form.clearErrors("allowed_ips");
    if (!ips.includes(ip)) field.onChange([...ips, ip]);
    setEntry("");
    return true;
  }
  usePendingEntry("allowed_ips", () => entry.trim() === "" || add());
  const hint = "Leave empty to allow any address. One IPv4/IPv6 address or CIDR range per entry.";
  return (
    <FieldFrame id="new-ip" label="IP Restriction" hint={hint} error={error}>
      {ips.length > 0 && (
        <ul aria-label="Allowed addresses">
          {ips.map((ip) => (
            <li key={ip} className="actions">
              <code>{ip}</code>
              <button type="button" onClick={() => field.onChange(ips.filter((other) => other !== ip))} aria-label={`Remove ${ip}`}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="actions">
        <input
          id="new-ip"
          ref={field.ref}
          type="text"
          value={entry}
          placeholder="203.0.113.7 or 10.0.0.0/8"
          aria-invalid={Boolean(error)}
          aria-describedby={describedBy("new-ip", hint, error)}
          onChange={(event) => setEntry(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter") {
              event.preventDefault();
              add();
            }
          }}
        />
        <button type="button" onClick={add}>
          Add
        </button>
      </div>
    </FieldFrame>
  );
}

/** One labelled checkbox per operation of the API, grouped by resource. */
function EndpointChecklist({ form, groups }: { form: KeyForm; groups: EndpointGroup[] }) {
  const error = form.formState.errors.allowed_endpoints?.message;
  return (
    <>
      <div className="endpoints">
        {groups.map((group) => (
          <div key={group.tag} role="group" aria-label={group.tag}>
            <h3 className="muted">{group.tag}</h3>
            {group.endpoints.map(({ endpoint, summary }) => (
              <label key={endpoint} className="check" title={summary}>
                <input type="checkbox" value={endpoint} {...form.register("allowed_endpoints")} /> {endpoint}
              </label>
            ))}
          </div>
        ))}
      </div>
      {error && <p className="error">{error}</p>}
    </>
  );
}

function CreatedKey({ created }: { created: NewKey }) {
  return (
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
      <Link className="button" href={LIST}>
        Back to API keys
      </Link>
    </section>
  );
}
