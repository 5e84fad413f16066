"use client";

import { useRouter } from "next/navigation";
import { ActionButton } from "@/components/action-button";
import { announce } from "@/components/status-message";
import { AdminForm, describedBy, InputField, numberOrUndefined, SelectField, useAdminForm } from "@/components/form";
import { createDatabaseUserBodySchema, PRIVILEGES } from "@/lib/databases/schemas";
import type { DatabaseUserRecord } from "@/lib/databases/service";
import { accountPaths } from "../paths";
import { createDatabaseUserAction, detachDatabaseAction, grantDatabaseAction } from "./actions";
import { grantFormSchema } from "./schemas";

/** A new database user; once made, its page, where it is given databases. */
export function CreateDatabaseUserForm({ account }: { account: { id: number; username: string } }) {
  const router = useRouter();
  const list = accountPaths(account.id).databaseUsers;
  const { form, message, onSubmit } = useAdminForm({
    schema: createDatabaseUserBodySchema,
    defaultValues: { username: "", password: "" },
    save: (values) => createDatabaseUserAction(account.id, values),
    doneHref: list,
    onSaved: (id: number) => {
      announce(`Database user created.`, { path: `${list}/${id}/edit` });
      router.push(`${list}/${id}/edit`);
      router.refresh();
    },
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Create user" cancelHref={list}>
      <InputField
        form={form}
        name="username"
        label="Username"
        placeholder="shop"
        autoComplete="off"
        hint={`Letters, digits and _. The account's prefix ${account.username}_ is added when left out.`}
      />
      <InputField
        form={form}
        name="password"
        label="Password"
        type="password"
        autoComplete="new-password"
        hint="At least 8 characters. Kept by the database server only: the panel cannot show it again."
      />
    </AdminForm>
  );
}

/**
 * The databases a user reaches, each with its privileges ("Change" loads them into the form
 * below, "Detach" takes the database away), and the form that gives one.
 */
export function UserDatabases({ accountId, user, databases }: { accountId: number; user: DatabaseUserRecord; databases: { id: number; database_name: string }[] }) {
  const { form, message, onSubmit } = useAdminForm({
    schema: grantFormSchema,
    defaultValues: { database_id: databases[0]?.id, privileges: ["ALL PRIVILEGES"] },
    save: (values) => grantDatabaseAction(accountId, user.id, values),
    doneHref: `${accountPaths(accountId).databaseUsers}/${user.id}/edit`,
    done: (values) => `Privileges on ${databases.find((database) => database.id === values.database_id)?.database_name ?? "the database"} saved.`,
  });
  const privilegesError = form.formState.errors.privileges?.message;
  return (
    <>
      <section className="card" aria-labelledby="user-databases-heading">
        <h2 id="user-databases-heading">Databases of {user.username}</h2>
        <div className="table-scroll">
          <table className="data">
            <thead>
              <tr>
                <th>Database</th>
                <th>Privileges</th>
                <th aria-label="Actions" />
              </tr>
            </thead>
            <tbody>
              {user.databases.length === 0 && (
                <tr>
                  <td colSpan={3} className="muted">
                    No database yet: give it one below.
                  </td>
                </tr>
              )}
              {user.databases.map((database) => (
                <tr key={database.id}>
                  <td>{database.database_name}</td>
                  <td>{database.privileges.join(", ")}</td>
                  <td>
                    <span className="actions">
                      <button
                        type="button"
                        aria-label={`Change the privileges on ${database.database_name}`}
                        onClick={() => {
                          form.setValue("database_id", database.id);
                          form.setValue("privileges", database.privileges as never);
                          form.setFocus("database_id");
                        }}
                      >
                        Change
                      </button>
                      <ActionButton
                        label="Detach"
                        danger
                        subject={database.database_name}
                        ariaLabel={`Detach ${database.database_name}`}
                        confirm={`Take ${database.database_name} away from ${user.username}?\n\nApplications logging in as ${user.username} lose access to it at once; the database itself stays.`}
                        action={() => detachDatabaseAction(accountId, user.id, database.id)}
                      />
                    </span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section className="card" aria-labelledby="grant-heading">
        <h2 id="grant-heading">Give access to a database</h2>
        {databases.length === 0 ? (
          <p className="muted">The account has no database yet.</p>
        ) : (
          <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Save access">
            <SelectField
              form={form}
              name="database_id"
              label="Database"
              choices={databases.map((database) => ({ value: String(database.id), label: database.database_name }))}
              options={numberOrUndefined}
              hint="A database it reaches already gets the privileges chosen here instead of its present ones."
            />
            <fieldset aria-describedby={describedBy("privileges", null, privilegesError)}>
              <legend>Privileges</legend>
              <div className="privileges">
                {PRIVILEGES.map((privilege) => (
                  <label key={privilege} className="check">
                    <input type="checkbox" value={privilege} {...form.register("privileges")} /> {privilege}
                  </label>
                ))}
              </div>
              {privilegesError && (
                <p className="error" id="privileges-error">
                  Privileges {privilegesError}
                </p>
              )}
            </fieldset>
          </AdminForm>
        )}
      </section>
    </>
  );
}
