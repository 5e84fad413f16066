"use client";

import { AdminForm, InputField, useAdminForm } from "@/components/form";
import { createDatabaseBodySchema } from "@/lib/databases/schemas";
import { accountPaths } from "../paths";
import { createDatabaseAction } from "./actions";

export function CreateDatabaseForm({ account }: { account: { id: number; username: string } }) {
  const list = accountPaths(account.id).databases;
  const { form, message, onSubmit } = useAdminForm({
    schema: createDatabaseBodySchema,
    defaultValues: { database_name: "" },
    save: (values) => createDatabaseAction(account.id, values),
    doneHref: list,
    // The server adds the account's prefix when it is left out (lib/databases/service.ts prefixedName).
    done: (values) => `Database ${values.database_name.startsWith(`${account.username}_`) ? values.database_name : `${account.username}_${values.database_name}`} created.`,
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Create database" cancelHref={list}>
      <InputField
        form={form}
        name="database_name"
        label="Database name"
        placeholder="shop"
        autoComplete="off"
        hint={`Letters, digits and _. The account's prefix ${account.username}_ is added when left out (shop becomes ${account.username}_shop).`}
      />
    </AdminForm>
  );
}
