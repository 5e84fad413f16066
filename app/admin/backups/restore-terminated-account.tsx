"use client";

import Link from "next/link";
import { useState } from "react";
import { describedBy, FieldFrame, TextField, UsernameConfirmationField, useAdminAction } from "@/components/form";
import type { BackupRun } from "@/lib/backups/service";
import { restoreTerminatedAccountAction, usernameRunsAction } from "./actions";
import { useFormatTime } from "@/components/time";
import { RestorePointsTable } from "./restore-points-table";

/**
 * "Restore a terminated account": a username's restore points in the repository of a node (the
 * choice shown when there are several; `local` first), each able to make the account again on
 * that node behind a confirmation.
 */
export function RestoreTerminatedAccount({ nodes }: { nodes: string[] }) {
  const { pending, state, fieldError, run } = useAdminAction();
  const [username, setUsername] = useState("");
  const [node, setNode] = useState(nodes[0] ?? "local");
  const [found, setFound] = useState<{ username: string; node: string; runs: BackupRun[] } | null>(null);
  const [restoring, setRestoring] = useState<BackupRun | null>(null);
  const [restored, setRestored] = useState<{ id: number; username: string; message: string } | null>(null);

  return (
    <section className="card" style={{ marginTop: "1.5rem" }} aria-labelledby="restore-terminated-heading">
      <h2 id="restore-terminated-heading">Restore a terminated account</h2>
      <p className="muted">
        An account that was terminated can be made again from one of its restore points: its sites, DNS zones, PHP settings, databases with their
        users and grants, cron jobs and SSH keys, then its files and databases.
      </p>
      {state?.error && !fieldError("username") && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      <form
        aria-label="Find restore points"
        onSubmit={(event) => {
          event.preventDefault();
          const lookedUp = username.trim().toLowerCase();
          setFound(null);
          setRestoring(null);
          setRestored(null);
          run(() => usernameRunsAction(lookedUp, node), (runs) => setFound({ username: lookedUp, node, runs: runs ?? [] }));
        }}
      >
        <TextField id="terminated-username" label="Username" autoComplete="off" value={username} onChange={setUsername} error={fieldError("username")} />
        {nodes.length > 1 && (
          <FieldFrame id="terminated-node" label="Node it was on" hint="Each node keeps the backups of the accounts it hosted; the account is made again there." error={fieldError("node")}>
            <select id="terminated-node" aria-describedby={describedBy("terminated-node", true, fieldError("node"))} value={node} onChange={(event) => setNode(event.target.value)}>
              {nodes.map((name) => (
                <option key={name}>{name}</option>
              ))}
            </select>
          </FieldFrame>
        )}
        <button type="submit" disabled={pending || username.trim() === ""}>
          Find restore points
        </button>
      </form>
      {found && found.runs.length === 0 && (
        <p role="status">
          There are no backups of <strong>{found.username}</strong>
          {nodes.length > 1 && <> on the node {found.node}</>}: nothing to restore.
        </p>
      )}
      {found && found.runs.length > 0 && (
        <RestorePointsTable label={`Restore points of ${found.username}`} restorePoints={found.runs} action="Restore account" onPick={setRestoring} />
      )}
      {found && restoring && (
        <RestoreAccountForm
          key={restoring.id}
          username={found.username}
          node={found.node}
          restorePoint={restoring}
          onDone={(account) => {
            setRestoring(null);
            setRestored(account);
          }}
          onCancel={() => setRestoring(null)}
        />
      )}
      {restored && (
        <p role="status">
          {restored.message} <Link href={`/admin/accounts/${restored.id}`}>Open the account {restored.username}</Link>
        </p>
      )}
    </section>
  );
}

/** The confirmation of a whole-account restore: the username typed again. */
export function RestoreAccountForm({
  username,
  node,
  restorePoint,
  onDone,
  onCancel,
}: {
  username: string;
  node: string;
  restorePoint: BackupRun;
  onDone: (account: { id: number; username: string; message: string }) => void;
  onCancel: () => void;
}) {
  const { pending, state, fieldError, run } = useAdminAction();
  const formatTime = useFormatTime();
  const [confirmation, setConfirmation] = useState("");

  return (
    <form
      className="notice"
      aria-label="Restore the account"
      onSubmit={(event) => {
        event.preventDefault();
        run(
          () => restoreTerminatedAccountAction({ username, snapshot: restorePoint.id, node }, confirmation),
          (account) => account && onDone(account),
        );
      }}
    >
      <p>
        Makes the account <strong>{username}</strong> again as it was at {formatTime(restorePoint.time)}, with its files and databases from that
        backup. The username must not be in use; if any step fails, nothing of it is kept.
      </p>
      {state?.error && !fieldError("confirmation") && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      <UsernameConfirmationField id="restore-account-confirmation" value={confirmation} onChange={setConfirmation} error={fieldError("confirmation")} />
      <button type="submit" className="danger" disabled={pending || confirmation.trim() === ""}>
        Restore account {username}
      </button>{" "}
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}
