"use client";

import Link from "next/link";
import { useState } from "react";
import { AdminForm, emptyAs, InputField, SelectField, useAdminForm } from "@/components/form";
import { CopyButton } from "@/components/copy-button";
import { Time } from "@/components/time";
import { createNodeSchema, type NodeFormInput, nodeFormSchema } from "@/lib/nodes/schemas";
import { createNodeAction, type NewNode, updateNodeAction } from "./actions";

const LIST = "/admin/nodes";

/** Add a node; once added, the command that enrols its machine, shown this once. */
export function CreateNodeForm({ natsUrl }: { natsUrl: string | null }) {
  const [created, setCreated] = useState<NewNode | null>(null);
  const { form, message, onSubmit } = useAdminForm({
    schema: createNodeSchema,
    defaultValues: { name: "", ipv4: "", ssh_host: null },
    save: createNodeAction,
    doneHref: LIST,
    onSaved: setCreated,
  });
  if (created) return <JoinCommand node={created} natsUrl={natsUrl} />;
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Add node" cancelHref={LIST}>
      <fieldset>
        <legend>Node Details</legend>
        <InputField form={form} name="name" label="Name" autoComplete="off" hint="Lower-case letters, digits and inner dashes, e.g. web-2. It cannot change once the node has joined." />
        <InputField form={form} name="ipv4" label="Public IPv4" autoComplete="off" hint="The address its accounts' domains point to (their zones' A records)." />
        <InputField form={form} name="ssh_host" label="SSH host" autoComplete="off" options={emptyAs(null)} hint="Optional: the host name customers connect to for SFTP and SSH on this node." />
      </fieldset>
    </AdminForm>
  );
}

function JoinCommand({ node, natsUrl }: { node: NewNode; natsUrl: string | null }) {
  const command = node.command;
  return (
    <section className="card" aria-label="Enrol the node">
      <h2>Node “{node.name}” added</h2>
      <p className="notice">
        Run this on the new machine, as root, in the panel&apos;s directory, before <Time at={node.expiresAt} />. The
        token works once and is shown only now; if it expires, remove the node and add it again.
      </p>
      <div className="secret">
        <span>Command</span>
        <code data-testid="join-command">{command}</code>
        <CopyButton value={command} label="command" />
      </div>
      <p className="muted">
        {natsUrl
          ? `Change the --nats address if that machine reaches the NATS server by another name.${command.includes(" --ca ") ? " Copy the CA certificate named by --ca to that machine first." : ""}`
          : "Set NATS_URL on this panel first: nodes take their work from a NATS server."}{" "}
        Then start its agent there: <code>npm run panel -- node agent</code>.
      </p>
      <Link className="button" href={LIST}>
        Back to nodes
      </Link>
    </section>
  );
}

/** A node's name (until it joins), address, SSH host and whether it takes new accounts. */
export function EditNodeForm({ nodeId, initial, joined }: { nodeId: number; initial: NodeFormInput; joined: boolean }) {
  const { form, message, onSubmit } = useAdminForm({
    schema: nodeFormSchema,
    defaultValues: initial,
    save: (values) => updateNodeAction(nodeId, values),
    doneHref: LIST,
    done: (values) => `Node ${values.name} saved.`,
  });
  return (
    <AdminForm form={form} message={message} onSubmit={onSubmit} submitLabel="Save Changes" cancelHref={LIST}>
      <fieldset>
        <legend>Node Details</legend>
        <InputField form={form} name="name" label="Name" autoComplete="off" readOnly={joined} hint={joined ? "Fixed: the node has joined under this name." : undefined} />
        <InputField form={form} name="ipv4" label="Public IPv4" autoComplete="off" />
        <InputField form={form} name="ssh_host" label="SSH host" autoComplete="off" options={emptyAs(null)} hint="Optional." />
        <SelectField
          form={form}
          name="state"
          label="New accounts"
          choices={[
            { value: "active", label: "Active: takes new accounts" },
            { value: "draining", label: "Draining: takes no new accounts" },
          ]}
        />
      </fieldset>
    </AdminForm>
  );
}
