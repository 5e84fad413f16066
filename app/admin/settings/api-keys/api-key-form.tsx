"use client";

import Link from "next/link";
import { useEffect, useRef, useState } from "react";
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
import { type ApiKeyScope, endpointPresets, endpointsOfferedTo, isOfferedTo } from "@/lib/api-keys/endpoints";
import { createApiKeySchema } from "@/lib/api-keys/schemas";
import { CopyButton } from "@/components/copy-button";
import { addressOrCidrError } from "@/lib/net/ip-syntax";
import { createKeyAction, type NewKey, updateKeyAction } from "./actions";

type KeyInput = z.input<typeof createApiKeySchema>;
type KeyForm = AnyForm<KeyInput>;

interface Props {
  keyId?: number;
  initial?: KeyInput;
  /** The list as the admin left it (page, rows per page, search): where Save and Cancel lead. */
  listHref?: string;
  /** Every key's id and name: a name already taken gets a warning. */
  keyNames: { id: number; name: string }[];
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
export function ApiKeyForm({ keyId, initial, listHref = LIST, keyNames, resellers, accounts }: Props) {
  const [created, setCreated] = useState<{ key: NewKey; another: boolean } | null>(null);
  // Names of keys made on this page since it loaded ("Create & create another"): taken too.
  const [madeHere, setMadeHere] = useState<string[]>([]);
  const { form, message, onSubmit } = useAdminForm({
    schema: createApiKeySchema,
    defaultValues: initial ?? blankKey(),
    save: (values) => (keyId ? updateKeyAction(keyId, values) : createKeyAction(values)),
    doneHref: listHref,
    onSaved: (key, button) => {
      setCreated({ key, another: button === "another" });
      setMadeHere((names) => [...names, key.name]);
      form.reset(blankKey());
    },
  });
  const scope = form.watch("scope");
  const name = (form.watch("name") ?? "").trim().toLowerCase();
  const taken = [...keyNames.filter((other) => other.id !== keyId).map((other) => other.name), ...madeHere];
  const namesake = name ? taken.find((other) => other.trim().toLowerCase() === name) : undefined;
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
          cancelHref={listHref}
        >
          <fieldset>
            <legend>API Key Details</legend>
            <InputField
              form={form}
              name="name"
              label="Name"
              hint={
                namesake ? (
                  <span className="warning" role="status">
                    Another key is already called “{namesake}”. Two keys may share a name, but the list and the audit log
                    then cannot tell them apart: a distinct name (e.g. with the system or the year) helps.
                  </span>
                ) : (
                  "Which integration uses it, e.g. “Billing system”."
                )
              }
            />
          </fieldset>
          <fieldset>
            <legend>Security Settings</legend>
            <CheckboxField form={form} name="is_enabled" label="Enable API Key" />
            <IpRestrictionField form={form} />
          </fieldset>
          <fieldset>
            <legend>Endpoint Access</legend>
            <CheckboxField form={form} name="allow_all_endpoints" label="Allow all endpoints" />
            {!form.watch("allow_all_endpoints") && <EndpointPicker form={form} scope={scope} />}
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

/**
 * One labelled checkbox per operation the key's scope can reach (an account key is not offered
 * the admin routes), grouped by area, each with its summary; a filter box, "all of this area"
 * per group, and presets. A change of scope takes out what the new scope cannot reach, and says so.
 */
function EndpointPicker({ form, scope }: { form: KeyForm; scope: ApiKeyScope }) {
  const { field, fieldState } = useController({ control: form.control, name: "allowed_endpoints" });
  const selected = new Set<string>(field.value ?? []);
  const [filter, setFilter] = useState("");
  const [removed, setRemoved] = useState<string[]>([]);
  const offered = endpointsOfferedTo(scope);
  const needle = filter.trim().toLowerCase();
  const visible = needle
    ? offered.filter((choice) => `${choice.endpoint} ${choice.summary} ${choice.area}`.toLowerCase().includes(needle))
    : offered;
  const areas = [...new Set(visible.map((choice) => choice.area))];
  const set = (endpoints: Iterable<string>) => field.onChange([...new Set(endpoints)]);

  const previousScope = useRef(scope);
  useEffect(() => {
    if (previousScope.current === scope) return;
    previousScope.current = scope;
    const current: string[] = form.getValues("allowed_endpoints") ?? [];
    const out = current.filter((endpoint) => !isOfferedTo(scope, endpoint));
    setRemoved(out);
    if (out.length) form.setValue("allowed_endpoints", current.filter((endpoint) => isOfferedTo(scope, endpoint)));
  }, [scope, form]);

  const error = fieldState.error?.message;
  return (
    <div className="endpoint-picker">
      <div className="actions">
        <span className="muted">Presets:</span>
        {endpointPresets.map((preset) => {
          const picks = offered.filter(preset.picks).map((choice) => choice.endpoint);
          if (picks.length === 0) return null;
          return (
            <button key={preset.name} type="button" title={preset.describe} onClick={() => set(picks)}>
              {preset.name}
            </button>
          );
        })}
        <button type="button" onClick={() => set([])} disabled={selected.size === 0}>
          Clear
        </button>
        <span className="muted" role="status">
          {selected.size} of {offered.length} selected
        </span>
      </div>
      {removed.length > 0 && (
        <p className="notice" role="status">
          Taken out, as this scope cannot reach {removed.length === 1 ? "it" : "them"}: {removed.join(", ")}.
        </p>
      )}
      <div className="field">
        <label htmlFor="endpoint-filter">Filter endpoints</label>
        <input id="endpoint-filter" type="search" autoComplete="off" placeholder="e.g. databases, GET, suspend" value={filter} onChange={(event) => setFilter(event.target.value)} />
      </div>
      <div className="endpoints">
        {areas.length === 0 && <p className="muted">No endpoint matches “{filter}”.</p>}
        {areas.map((area) => {
          const inArea = visible.filter((choice) => choice.area === area);
          const chosen = inArea.filter((choice) => selected.has(choice.endpoint)).length;
          return (
            <div key={area} role="group" aria-label={area}>
              <h3 className="muted">{area}</h3>
              <label className="check select-all">
                <input
                  type="checkbox"
                  checked={chosen === inArea.length}
                  ref={(input) => {
                    if (input) input.indeterminate = chosen > 0 && chosen < inArea.length;
                  }}
                  onChange={(event) => {
                    const endpoints = inArea.map((choice) => choice.endpoint);
                    set(event.target.checked ? [...selected, ...endpoints] : [...selected].filter((endpoint) => !endpoints.includes(endpoint)));
                  }}
                />{" "}
                All of {area}
              </label>
              {inArea.map(({ endpoint, summary }) => {
                const summaryId = `summary-${endpoint.replace(/[^A-Za-z0-9]+/g, "-")}`;
                return (
                  <div key={endpoint} className="endpoint">
                    <label className="check">
                      <input
                        type="checkbox"
                        value={endpoint}
                        checked={selected.has(endpoint)}
                        aria-describedby={summaryId}
                        onChange={(event) =>
                          set(event.target.checked ? [...selected, endpoint] : [...selected].filter((other) => other !== endpoint))
                        }
                      />{" "}
                      {endpoint}
                    </label>
                    <span className="summary muted" id={summaryId}>
                      {summary}
                    </span>
                  </div>
                );
              })}
            </div>
          );
        })}
      </div>
      {error && (
        <p className="error" id="allowed_endpoints-error">
          {error}
        </p>
      )}
    </div>
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
