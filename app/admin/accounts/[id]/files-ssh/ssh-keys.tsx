"use client";

import { useState } from "react";
import { describedBy, useAdminAction } from "@/components/form";
import { Time } from "@/components/time";
import type { SshKeyRecord } from "@/lib/ssh/schemas";
import { addSshKeyAction, deleteSshKeyAction } from "../../actions";

/** The account's SSH keys (SFTP and SSH logins): name, type, fingerprint, date; add and remove. */
export function SshKeys({
  account,
  keys,
  connection,
}: {
  account: { id: number; username: string };
  keys: SshKeyRecord[];
  connection: { host: string; port: number; shell: boolean; managed: boolean };
}) {
  const { pending, state, fieldError, run } = useAdminAction();
  const [name, setName] = useState("");
  const [publicKey, setPublicKey] = useState("");
  const port = connection.port === 22 ? "" : ` -P ${connection.port}`;

  return (
    <section className="card" style={{ marginTop: "1.5rem" }} aria-labelledby="ssh-keys-heading">
      <h2 id="ssh-keys-heading">SSH keys</h2>
      <p className="muted">
        {connection.managed ? (
          <>
            {connection.shell ? "SFTP and SSH (a shell)" : "SFTP only (no shell)"}:{" "}
            <code>
              sftp{port} {account.username}@{connection.host}
            </code>
          </>
        ) : (
          "This server does not run the customers' SFTP and SSH logins yet: keys are kept, and take effect once SSH_SERVER=openssh is set in the panel's configuration."
        )}
      </p>
      {state?.error && !fieldError("public_key") && !fieldError("name") && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      <div className="table-scroll">
        <table className="data">
          <thead>
            <tr>
              <th>Name</th>
              <th>Type</th>
              <th>Fingerprint</th>
              <th>Added</th>
              <th aria-label="Actions" />
            </tr>
          </thead>
          <tbody>
            {keys.length === 0 && (
              <tr>
                <td colSpan={5} className="muted">
                  No keys yet.
                </td>
              </tr>
            )}
            {keys.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>{key.type}</td>
                <td>
                  <code>{key.fingerprint}</code>
                </td>
                <td>
                  <Time at={key.created_at} />
                </td>
                <td>
                  <button
                    type="button"
                    disabled={pending}
                    aria-label={`Remove the SSH key ${key.name}`}
                    onClick={() => run(() => deleteSshKeyAction(account.id, key.id), undefined, `SSH key ${key.name} removed.`)}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          run(
            () => addSshKeyAction(account.id, { name, public_key: publicKey }),
            () => {
              setName("");
              setPublicKey("");
            },
            `SSH key ${name.trim()} added.`,
          );
        }}
      >
        <div className="field">
          <label htmlFor="ssh-key-name">Key name</label>
          <input
            id="ssh-key-name"
            type="text"
            maxLength={100}
            value={name}
            aria-invalid={fieldError("name") ? true : undefined}
            aria-describedby={describedBy("ssh-key-name", null, fieldError("name"))}
            onChange={(event) => setName(event.target.value)}
          />
          {fieldError("name") && (
            <div className="error" id="ssh-key-name-error">
              Key name {fieldError("name")}
            </div>
          )}
        </div>
        <div className="field">
          <label htmlFor="ssh-public-key">Public key (one line of an OpenSSH .pub file)</label>
          <textarea
            id="ssh-public-key"
            className="key"
            rows={3}
            value={publicKey}
            spellCheck={false}
            placeholder="ssh-ed25519 AAAA… you@laptop"
            aria-invalid={fieldError("public_key") ? true : undefined}
            aria-describedby={describedBy("ssh-public-key", null, fieldError("public_key"))}
            onChange={(event) => setPublicKey(event.target.value)}
          />
          {fieldError("public_key") && (
            <div className="error" id="ssh-public-key-error">
              {fieldError("public_key")}
            </div>
          )}
        </div>
        <button type="submit" disabled={pending}>
          Add key
        </button>
      </form>
    </section>
  );
}
