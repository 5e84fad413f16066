"use client";

import { AdminForm, InputField, useAdminForm } from "@/components/form";
import { RESELLER_USERNAME_RULE, type ResellerInput, resellerSchema } from "@/lib/resellers/schemas";
import { createResellerAction, updateResellerAction } from "./actions";

/** Create and rename of a reseller. */
export function ResellerForm({ resellerId, initial }: { resellerId?: number; initial?: ResellerInput }) {
  const { form, message, onSubmit } = useAdminForm({
    schema: resellerSchema,
    defaultValues: initial ?? { username: "" },
    save: (values) => (resellerId ? updateResellerAction(resellerId, values) : createResellerAction(values)),
    doneHref: "/admin/resellers",
    done: (values) => `Reseller ${values.username} ${resellerId ? "saved" : "created"}.`,
  });
  return (
    <AdminForm
      form={form}
      message={message}
      onSubmit={onSubmit}
      submitLabel={resellerId ? "Save Changes" : "Create"}
      cancelHref="/admin/resellers"
    >
      <fieldset>
        <legend>Reseller Details</legend>
        <InputField
          form={form}
          name="username"
          label="Username"
          autoComplete="off"
          hint={
            resellerId
              ? "Renaming keeps the reseller's accounts and API keys."
              : `Must ${RESELLER_USERNAME_RULE}.`
          }
        />
      </fieldset>
    </AdminForm>
  );
}
