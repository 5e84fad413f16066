"use client";

import { AdminForm, type AnyForm, CheckboxField, emptyAs, InputField, SelectField, useAdminForm } from "@/components/form";
import {
  ACCOUNT_USERNAME_RULE,
  accountAdminFieldsSchema,
  type AccountAdminFieldsInput,
  createAccountSchema,
} from "@/lib/accounts/schemas";
import type { Path } from "react-hook-form";
import { accountPaths } from "./[id]/paths";
import { createAccountAction, updateAccountAction } from "./actions";

interface Options {
  plans: string[];
  resellers: string[];
}

/**
 * Plan and reseller pickers, on both forms. "None" as reseller is `noReseller`: left out
 * (undefined) when creating, cleared (null) when editing.
 */
function PlanAndOwnerFieldset<Values extends { plan?: string; reseller?: string | null }>({
  form,
  plans,
  resellers,
  noReseller,
}: Options & { form: AnyForm<Values>; noReseller: null | undefined }) {
  return (
    <fieldset>
      <legend>Plan and Owner</legend>
      <div className="form-grid">
        <SelectField
          form={form}
          name={"plan" as Path<Values>}
          label="Plan"
          choices={plans.map((plan) => ({ value: plan, label: plan }))}
          hint="Sets the account's quotas."
        />
        <SelectField
          form={form}
          name={"reseller" as Path<Values>}
          label="Reseller"
          choices={[{ value: "", label: "None" }, ...resellers.map((reseller) => ({ value: reseller, label: reseller }))]}
          options={emptyAs(noReseller)}
          hint="A reseller's API key reaches only its own accounts; with none, only admin keys reach this one."
        />
      </div>
    </fieldset>
  );
}

/** A new account: its login, main domain and contact, then its plan and reseller. */
export function CreateAccountForm({ plans, resellers }: Options) {
  const { form, message, onSubmit } = useAdminForm({
    schema: createAccountSchema,
    defaultValues: { username: "", domain: "", email: undefined, plan: plans.includes("default") ? "default" : plans[0], reseller: undefined },
    save: createAccountAction,
    doneHref: "/admin/accounts",
    done: (values) => `Account ${values.username.trim().toLowerCase()} created.`,
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Create" cancelHref="/admin/accounts">
      <fieldset>
        <legend>Account Details</legend>
        <div className="form-grid">
          <InputField
            form={form}
            name="username"
            label="Username"
            autoComplete="off"
            hint={`Must ${ACCOUNT_USERNAME_RULE}. Prefixes the account's databases.`}
          />
          <InputField
            form={form}
            name="domain"
            label="Domain"
            placeholder="example.com"
            autoComplete="off"
            hint="The main domain; its DNS zone is created with it."
          />
          <InputField form={form} name="email" label="Email" type="email" autoComplete="off" options={emptyAs(undefined)} hint="Optional." />
        </div>
      </fieldset>
      <PlanAndOwnerFieldset form={form} plans={plans} resellers={resellers} noReseller={undefined} />
    </AdminForm>
  );
}

/** The admin-only fields of an existing account. */
export function AccountAdminForm({ accountId, initial, plans, resellers }: Options & { accountId: number; initial: AccountAdminFieldsInput }) {
  const { form, message, onSubmit } = useAdminForm({
    schema: accountAdminFieldsSchema,
    defaultValues: initial,
    save: (values) => updateAccountAction(accountId, values),
    doneHref: accountPaths(accountId).settings,
    done: () => "Settings saved.",
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Save Changes" cancelHref={accountPaths(accountId).overview}>
      <PlanAndOwnerFieldset form={form} plans={plans} resellers={resellers} noReseller={null} />
      <fieldset>
        <legend>Access</legend>
        <CheckboxField form={form} name="has_ssh_access" label="SSH access" hint="Whether the account may log in over SSH." />
      </fieldset>
    </AdminForm>
  );
}
