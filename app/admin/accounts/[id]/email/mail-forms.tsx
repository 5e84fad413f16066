"use client";

import { useController } from "react-hook-form";
import { AdminForm, CheckboxField, describedBy, emptyAs, FieldFrame, InputField, SelectField, useAdminForm } from "@/components/form";
import { createMailboxBodySchema, createMailDomainBodySchema, updateMailboxBodySchema } from "@/lib/email/schemas";
import { accountPaths } from "../paths";
import { createAliasAction, createMailboxAction, createMailDomainAction, updateMailboxAction } from "./actions";
import { aliasFormSchema } from "./schemas";

// The forms of an account's Email tab, each on the API's own schema (lib/email/schemas.ts): a
// refusal, the browser's or the server's, is shown at its field.

const quotaInput = { setValueAs: (value: unknown) => (value === "" || value === undefined || value === null ? undefined : Number(value)) };

/** "Add mail domain": one of the account's domains that does not receive mail here yet. */
export function AddMailDomainForm({ accountId, domains }: { accountId: number; domains: string[] }) {
  const list = accountPaths(accountId).email;
  const { form, message, onSubmit } = useAdminForm({
    schema: createMailDomainBodySchema,
    defaultValues: { domain: domains[0] ?? "" },
    save: (values) => createMailDomainAction(accountId, values),
    doneHref: list,
    done: (values) => `Mail domain ${values.domain} added: its zone has MX, SPF and DMARC where it had none.`,
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Add mail domain">
      <SelectField
        form={form}
        name="domain"
        label="Domain"
        choices={[{ value: "", label: "Choose a domain" }, ...domains.map((domain) => ({ value: domain, label: domain }))]}
        hint="Mail to this domain is received here; its zone gets the records mail needs where it has none of the kind."
      />
    </AdminForm>
  );
}

/** A new mailbox: its address in one of the account's domains, a password, a quota. */
export function CreateMailboxForm({ accountId, domains }: { accountId: number; domains: string[] }) {
  const list = accountPaths(accountId).email;
  const { form, message, onSubmit } = useAdminForm({
    schema: createMailboxBodySchema,
    defaultValues: { address: "", password: "", quota_mb: 1024, enabled: true },
    save: (values) => createMailboxAction(accountId, values),
    doneHref: list,
    done: (values) => `Mailbox ${values.address} created.`,
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Create mailbox" cancelHref={list}>
      <InputField
        form={form}
        name="address"
        label="Address"
        type="email"
        placeholder={`info@${domains[0] ?? "example.com"}`}
        autoComplete="off"
        hint={`In one of the account's domains (${domains.join(", ")}); letters, digits and . _ - before the @.`}
      />
      <InputField
        form={form}
        name="password"
        label="Password"
        type="password"
        autoComplete="new-password"
        hint="At least 10 characters. Kept only as a hash: the panel cannot show it again."
      />
      <InputField form={form} name="quota_mb" label="Quota (MB)" type="number" min={1} options={quotaInput} hint="The most mail the mailbox may hold." />
      <CheckboxField form={form} name="enabled" label="Enabled" hint="A disabled mailbox still receives mail but refuses logins." />
    </AdminForm>
  );
}

/** A mailbox's password (left empty: kept), quota and whether it may log in; its address stays. */
export function EditMailboxForm({ accountId, mailbox }: { accountId: number; mailbox: { id: number; address: string; quota_mb: number; enabled: boolean } }) {
  const list = accountPaths(accountId).email;
  const { form, message, onSubmit } = useAdminForm({
    schema: updateMailboxBodySchema,
    defaultValues: { password: undefined, quota_mb: mailbox.quota_mb, enabled: mailbox.enabled },
    save: (values) => updateMailboxAction(accountId, mailbox.id, values),
    doneHref: list,
    done: (values) => `Mailbox ${mailbox.address} saved${values.password === undefined ? "" : " with its new password"}.`,
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Save Changes" cancelHref={list}>
      <InputField
        form={form}
        name="password"
        label="New password"
        type="password"
        autoComplete="new-password"
        options={emptyAs(undefined)}
        hint="Leave empty to keep the current one. At least 10 characters."
      />
      <InputField form={form} name="quota_mb" label="Quota (MB)" type="number" min={1} options={quotaInput} />
      <CheckboxField form={form} name="enabled" label="Enabled" hint="A disabled mailbox still receives mail but refuses logins; its open sessions are ended." />
    </AdminForm>
  );
}

/** A new alias or catch-all: its address (or @domain), and where its mail goes. */
export function CreateAliasForm({ accountId, domains }: { accountId: number; domains: string[] }) {
  const list = accountPaths(accountId).email;
  const { form, message, onSubmit } = useAdminForm({
    schema: aliasFormSchema,
    defaultValues: { address: "", targets: "" },
    save: (values) => createAliasAction(accountId, values),
    doneHref: list,
    done: (values) => `${values.address.startsWith("@") ? "Catch-all" : "Alias"} ${values.address} created.`,
  });
  const { field, fieldState } = useController({ control: form.control, name: "targets" });
  const hint = "One address per line (or separated by commas): mailboxes of this account, or addresses elsewhere.";
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Create alias" cancelHref={list}>
      <InputField
        form={form}
        name="address"
        label="Address"
        placeholder={`sales@${domains[0] ?? "example.com"}`}
        autoComplete="off"
        hint={`An address in one of the account's domains (${domains.join(", ")}), or @${domains[0] ?? "example.com"} for the domain's catch-all: mail to any address of it that is no mailbox or alias.`}
      />
      <FieldFrame id="targets" label="Forward to" hint={hint} error={fieldState.error?.message}>
        <textarea
          id="targets"
          rows={3}
          spellCheck={false}
          placeholder={`info@${domains[0] ?? "example.com"}\nsomeone@example.net`}
          aria-invalid={Boolean(fieldState.error)}
          aria-describedby={describedBy("targets", hint, fieldState.error)}
          {...field}
        />
      </FieldFrame>
    </AdminForm>
  );
}
