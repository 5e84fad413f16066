"use client";

import { useState } from "react";
import { describedBy, FieldFrame, TextField, UsernameConfirmationField, useAdminAction } from "@/components/form";
import { backupNowAction, restoreFromRunAction } from "@/app/admin/backups/actions";
import { Failure } from "@/components/status";
import { Time, useFormatTime } from "@/components/time";
import { RestorePointsTable } from "@/app/admin/backups/restore-points-table";
import type { AccountBackupStatus } from "@/lib/backups/schemas";
import type { BackupRun } from "@/lib/backups/service";

/** The account's backups: its status line, "Back up now", and its restore points, each restorable behind a confirmation. */
export function Backups({
  account,
  status,
  runs,
  runsError,
}: {
  account: { id: number; username: string };
  status: AccountBackupStatus | null;
  runs: BackupRun[];
  /** Why the restore points could not be read (restic's error), if they could not. */
  runsError: string | null;
}) {
  const { pending, state, run } = useAdminAction();
  const [message, setMessage] = useState<string | null>(null);
  const [restoring, setRestoring] = useState<BackupRun | null>(null);

  return (
    <section className="card" style={{ marginTop: "1.5rem" }} aria-labelledby="account-backups-heading">
      <h2 id="account-backups-heading">Backups</h2>
      <p data-testid="backup-status">
        Last success: <Time at={status?.last_success_at} empty="never" />
        {status?.last_failure_at && (
          <>
            {" "}
            · Last failure: <Time at={status.last_failure_at} />
          </>
        )}
      </p>
      {status?.last_error && (
        <p>
          <Failure label="Last backup failed" reason={status.last_error} />
        </p>
      )}
      <p>
        <button
          type="button"
          disabled={pending}
          onClick={() => {
            setMessage(null);
            run(() => backupNowAction(account.id), (started) => setMessage(started ?? null));
          }}
        >
          Back up now
        </button>{" "}
        <span className="muted">It runs in the background: reload the page to see its restore point and outcome.</span>
      </p>
      {message && <p role="status">{message}</p>}
      {state?.error && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      {runsError && (
        <p className="alert" role="alert">
          The restore points could not be read: {runsError}
        </p>
      )}
      <h3>Restore points</h3>
      <RestorePointsTable
        label="Restore points"
        restorePoints={runs}
        action="Restore"
        onPick={(restorePoint) => {
          setMessage(null);
          setRestoring(restorePoint);
        }}
      />
      {restoring && (
        <RestoreForm
          key={restoring.id}
          account={account}
          restorePoint={restoring}
          onDone={(restored) => {
            setRestoring(null);
            setMessage(restored);
          }}
          onCancel={() => setRestoring(null)}
        />
      )}
    </section>
  );
}

type RestoreChoice = "everything" | "database" | "path";

/**
 * The confirmation of a restore: what to restore from the restore point (a database optionally
 * under another name, `into`; a path optionally beside its place, `to`), and the username typed
 * to confirm.
 */
function RestoreForm({
  account,
  restorePoint,
  onDone,
  onCancel,
}: {
  account: { id: number; username: string };
  restorePoint: BackupRun;
  onDone: (message: string) => void;
  onCancel: () => void;
}) {
  const { pending, state, fieldError, run } = useAdminAction();
  const formatTime = useFormatTime();
  const [choice, setChoice] = useState<RestoreChoice>("everything");
  const [database, setDatabase] = useState(restorePoint.databases[0] ?? "");
  const [into, setInto] = useState("");
  const [relativePath, setRelativePath] = useState("");
  const [to, setTo] = useState("");
  const [confirmation, setConfirmation] = useState("");
  const errorAtField = ["confirmation", "database", "into", "path", "to"].some((field) => fieldError(field));
  // A database under another name, a path beside its place (empty: each into its own place).
  const intoName = choice === "database" ? into.trim() : "";
  const toPath = choice === "path" ? to.trim() : "";
  const replaced = {
    everything: restorePoint.databases.length ? `public_html and the databases ${restorePoint.databases.join(", ")}` : "public_html",
    database: `the database ${database || "chosen"}`,
    path: `${relativePath || "the path"} in the home`,
  }[choice];
  const outcome = intoName ? (
    <>
      The backup&apos;s <strong>{database}</strong> will be restored as the database <strong>{intoName}</strong> of {account.username}: made
      when it does not exist, its tables replaced when it does.
    </>
  ) : toPath ? (
    <>
      The backup&apos;s <strong>{relativePath || "path"}</strong> will be restored at <strong>{toPath}</strong> in the home of {account.username},
      which must not exist yet: nothing there now is overwritten.
    </>
  ) : (
    <>
      <strong>{replaced}</strong> of {account.username} will be replaced by the backup&apos;s copy: what is there now is overwritten and
      changes made since {formatTime(restorePoint.time)} are lost.
    </>
  );

  return (
    <form
      className="notice"
      aria-label="Restore from a backup"
      onSubmit={(event) => {
        event.preventDefault();
        const input = {
          snapshot: restorePoint.id,
          ...(choice === "database" ? { database, ...(intoName ? { into: intoName } : {}) } : {}),
          ...(choice === "path" ? { path: relativePath, ...(toPath ? { to: toPath } : {}) } : {}),
        };
        run(() => restoreFromRunAction(account.id, input, confirmation), (restored) => onDone(restored ?? "Restored."));
      }}
    >
      <h3>Restore from the backup of {formatTime(restorePoint.time)}</h3>
      {state?.error && !errorAtField && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      <fieldset>
        <legend>What to restore</legend>
        <label className="check">
          <input type="radio" name="restore-choice" checked={choice === "everything"} onChange={() => setChoice("everything")} /> Everything:
          public_html and every database of the backup
        </label>
        <label className="check">
          <input
            type="radio"
            name="restore-choice"
            checked={choice === "database"}
            disabled={restorePoint.databases.length === 0}
            onChange={() => setChoice("database")}
          />{" "}
          One database
        </label>
        <label className="check">
          <input type="radio" name="restore-choice" checked={choice === "path"} onChange={() => setChoice("path")} /> One file or folder
        </label>
      </fieldset>
      {choice === "database" && (
        <FieldFrame id="restore-database" label="Database" error={fieldError("database")}>
          <select
            id="restore-database"
            value={database}
            aria-invalid={fieldError("database") ? true : undefined}
            aria-describedby={describedBy("restore-database", undefined, fieldError("database"))}
            onChange={(event) => setDatabase(event.target.value)}
          >
            {restorePoint.databases.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </FieldFrame>
      )}
      {choice === "database" && (
        <TextField
          id="restore-into"
          label="Restore as"
          hint="Optional: another database of the account's, e.g. keeper_copy"
          value={into}
          onChange={setInto}
          error={fieldError("into")}
        />
      )}
      {choice === "path" && (
        <TextField
          id="restore-path"
          label="Path"
          hint="Relative to the home, e.g. public_html/index.php"
          value={relativePath}
          onChange={setRelativePath}
          error={fieldError("path")}
        />
      )}
      {choice === "path" && (
        <TextField
          id="restore-to"
          label="Restore to"
          hint="Optional: a path of the home that does not exist yet, e.g. public_html.restored"
          value={to}
          onChange={setTo}
          error={fieldError("to")}
        />
      )}
      <p>{outcome}</p>
      <UsernameConfirmationField id="restore-confirmation" value={confirmation} onChange={setConfirmation} error={fieldError("confirmation")} />
      <button type="submit" className="danger" disabled={pending || confirmation.trim() === ""}>
        Restore
      </button>{" "}
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}
