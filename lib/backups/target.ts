import { env } from "@/lib/env";

// Where this machine's backups go, as the admin UI says it: the restic repository without any
// password it may carry (rest:https://user:secret@host/…), and whether it is a path on this
// server's own disk, which a lost disk takes with the sites it backs up.

const REMOTE = /^(sftp|rest|s3|b2|azure|gs|swift|rclone):/;

export interface BackupTarget {
  /** The repository, any user:password in it removed. */
  repository: string;
  /** A path on this server (a plain path or `local:`), not another machine. */
  onThisServer: boolean;
}

export function backupTarget(): BackupTarget {
  const repository = env().backup.repository;
  return {
    repository: repository.replace(/\/\/[^/@\s]*@/, "//"),
    onThisServer: !REMOTE.test(repository),
  };
}
