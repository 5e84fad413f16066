import { backupTarget } from "@/lib/backups/target";

/** Where this server's backups go, and a warning when that is its own disk (docs/backups.md). */
export function BackupTarget() {
  const target = backupTarget();
  return (
    <>
      <p className="muted" data-testid="backup-target">
        Backups of this server&apos;s accounts go to the restic repository <code>{target.repository}</code> (BACKUP_REPOSITORY); an account on
        another node is backed up into that node&apos;s own repository.
      </p>
      {target.onThisServer && (
        <p className="notice" role="note">
          This repository is on this server&apos;s own disk: a lost or broken disk takes the sites and their backups together. Set
          BACKUP_REPOSITORY to another machine (for example <code>sftp:backup@store.example:/panel</code>) and keep a copy of the password
          file off the server.
        </p>
      )}
    </>
  );
}
