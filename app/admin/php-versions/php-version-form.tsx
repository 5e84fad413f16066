"use client";

import { AdminForm, InputField, useAdminForm } from "@/components/form";
import { type PhpVersionInput, phpVersionSchema } from "@/lib/php/schemas";
import { addPhpVersionAction, updatePhpVersionAction } from "./actions";

/** Add and edit of a PHP version offered to the accounts' domains. */
export function PhpVersionForm({ phpVersionId, initial }: { phpVersionId?: number; initial?: PhpVersionInput }) {
  const { form, message, onSubmit } = useAdminForm({
    schema: phpVersionSchema,
    defaultValues: initial ?? { version: "" },
    save: (values) => (phpVersionId ? updatePhpVersionAction(phpVersionId, values) : addPhpVersionAction(values)),
    doneHref: "/admin/php-versions",
    done: (values) => `PHP ${values.version} ${phpVersionId ? "saved" : "added"}.`,
  });
  return (
    <AdminForm
      form={form}
      message={message}
      onSubmit={onSubmit}
      submitLabel={phpVersionId ? "Save Changes" : "Add"}
      cancelHref="/admin/php-versions"
    >
      <fieldset>
        <legend>PHP Version</legend>
        <InputField
          form={form}
          name="version"
          label="Version"
          placeholder="8.3"
          autoComplete="off"
          hint="Major and minor version, as installed on the server (e.g. 8.3). Domains using it keep it when it is edited."
        />
      </fieldset>
    </AdminForm>
  );
}
