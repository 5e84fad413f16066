"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import type { Path } from "react-hook-form";
import { AdminForm, type AnyForm, CheckboxField, emptyAs, InputField, numberOrNull, numberOrUndefined, SelectField, useAdminForm } from "@/components/form";
import { DOMAIN_TYPES, SITE_PROFILES } from "@/lib/domains/schemas";
import { accountPaths } from "../paths";
import { createDomainAction, updateDomainAction } from "./actions";
import { type DomainCreateFormInput, domainCreateFormSchema, type DomainEditFormInput, domainEditFormSchema } from "./schemas";

type Choice = { value: string; label: string };

const PROFILE_LABELS: Record<(typeof SITE_PROFILES)[number], string> = { php: "PHP", static: "Static files", proxy: "Proxy to an application" };
const TYPE_LABELS: Record<(typeof DOMAIN_TYPES)[number], string> = { domain: "Domain", subdomain: "Subdomain", parked: "Parked domain (alias)" };
const PROFILE_HINTS: Record<(typeof SITE_PROFILES)[number], string> = {
  php: "Files from the document root; .php files and paths with no file run index.php.",
  static: "Files from the document root only; PHP does not run.",
  proxy: "Requests go to the account's own application, listening on a unix socket.",
};
const TYPE_HINTS: Record<(typeof DOMAIN_TYPES)[number], string> = {
  domain: "A site of its own.",
  subdomain: "A site under one of the account's domains.",
  parked: "Another name for one of the account's domains: it shows that domain's site.",
};

/** Site profile and, for a proxy, the application's socket: on both forms. */
function SiteFields<Values extends { site_profile?: string; proxy_socket?: string | null }>({ form }: { form: AnyForm<Values> }) {
  const field = (name: "site_profile" | "proxy_socket") => name as Path<Values>;
  const profile = form.watch(field("site_profile")) as unknown as string | undefined;
  return (
    <>
      <SelectField
        form={form}
        name={field("site_profile")}
        label="Site"
        choices={SITE_PROFILES.map((value) => ({ value, label: PROFILE_LABELS[value] }))}
        hint={profile && PROFILE_HINTS[profile as keyof typeof PROFILE_HINTS]}
      />
      {profile === "proxy" && (
        <InputField
          form={form}
          name={field("proxy_socket")}
          label="Application socket"
          placeholder="app.sock"
          autoComplete="off"
          options={emptyAs(null)}
          hint="The file name of the unix socket the account's application listens on, in the run/ folder of its home (e.g. app.sock for run/app.sock)."
        />
      )}
    </>
  );
}

/** After a save: the list, or the zone file's warning first when there is one. */
function useSaved(list: string) {
  const router = useRouter();
  const [warning, setWarning] = useState<string | null>(null);
  const saved = (zoneWarning: string | null) => {
    if (zoneWarning) return setWarning(zoneWarning);
    router.push(list);
    router.refresh();
  };
  return { warning, saved };
}

/** Add a domain, subdomain or parked domain, with how its site runs and its PHP version. */
export function CreateDomainForm({ accountId, domains, phpVersions }: { accountId: number; domains: Choice[]; phpVersions: Choice[] }) {
  const list = accountPaths(accountId).domains;
  const { warning, saved } = useSaved(list);
  const { form, message, onSubmit } = useAdminForm({
    schema: domainCreateFormSchema,
    defaultValues: { domain: "", domain_type: "domain", site_profile: "php" } as DomainCreateFormInput,
    save: (values) => createDomainAction(accountId, values),
    doneHref: list,
    done: (values) => `Domain ${values.domain} added.`,
    onSaved: saved,
  });
  const type = form.watch("domain_type");
  const profile = form.watch("site_profile");
  if (warning) return <SavedWithWarning warning={warning} list={list} />;
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Add domain" cancelHref={list}>
      <fieldset>
        <legend>Domain</legend>
        <div className="form-grid">
          <SelectField
            form={form}
            name="domain_type"
            label="Type"
            choices={DOMAIN_TYPES.map((value) => ({ value, label: TYPE_LABELS[value] }))}
            hint={TYPE_HINTS[type]}
          />
          {type === "subdomain" && (
            <SelectField form={form} name="parent_domain_id" label="Under" choices={[{ value: "", label: "Choose a domain" }, ...domains]} options={numberOrUndefined} />
          )}
          {type === "parked" && (
            <SelectField form={form} name="parked_on_domain_id" label="Parked on" choices={[{ value: "", label: "Choose a domain" }, ...domains]} options={numberOrUndefined} />
          )}
          <InputField
            form={form}
            name="domain"
            label={type === "subdomain" ? "Subdomain" : "Domain name"}
            placeholder={type === "subdomain" ? "blog" : "example.com"}
            autoComplete="off"
            hint={type === "subdomain" ? "Its first label (blog) or the full name (blog.example.com)." : "Its DNS zone is created with it."}
          />
          {type !== "parked" && (
            <InputField
              form={form}
              name="domain_path"
              label="Document root"
              placeholder={type === "subdomain" ? "public_html/blog.example.com" : "public_html/example.com"}
              autoComplete="off"
              options={emptyAs(undefined)}
              hint="A folder in the account's home; left empty, public_html/ and the domain's name."
            />
          )}
        </div>
      </fieldset>
      {type !== "parked" && (
        <fieldset>
          <legend>Site</legend>
          <div className="form-grid">
            <SiteFields form={form} />
            {profile === "php" && (
              <SelectField
                form={form}
                name="php_version_id"
                label="PHP version"
                choices={[{ value: "", label: "None yet" }, ...phpVersions]}
                options={numberOrUndefined}
              />
            )}
          </div>
        </fieldset>
      )}
    </AdminForm>
  );
}

/** A domain's site profile and PHP. */
export function EditDomainForm({
  accountId,
  domainId,
  initial,
  phpVersions,
}: {
  accountId: number;
  domainId: number;
  initial: DomainEditFormInput;
  phpVersions: Choice[];
}) {
  const list = accountPaths(accountId).domains;
  const { form, message, onSubmit } = useAdminForm({
    schema: domainEditFormSchema,
    defaultValues: initial,
    save: (values) => updateDomainAction(accountId, domainId, values),
    doneHref: list,
    done: () => "Domain saved.",
  });
  const profile = form.watch("site_profile");
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Save Changes" cancelHref={list}>
      <fieldset>
        <legend>Site</legend>
        <div className="form-grid">
          <SiteFields form={form} />
          {profile === "php" && (
            <SelectField
              form={form}
              name="php_version_id"
              label="PHP version"
              choices={[...(initial.php_version_id === null ? [{ value: "", label: "None yet" }] : []), ...phpVersions]}
              options={numberOrNull}
            />
          )}
        </div>
        {profile === "php" && <CheckboxField form={form} name="is_php_fpm_enabled" label="Run PHP" hint="Off: .php files are not run (PHP-FPM is not used for this domain)." />}
      </fieldset>
    </AdminForm>
  );
}

function SavedWithWarning({ warning, list }: { warning: string; list: string }) {
  return (
    <div className="notice" role="status">
      <p>{warning}</p>
      <a className="button" href={list}>
        Back to the domains
      </a>
    </div>
  );
}
