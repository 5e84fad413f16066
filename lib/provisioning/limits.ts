// The values the renderers allow that the request schemas share (README "Nodes": a rule a
// renderer checks lives with the renderer, and the services import it from here, so a node's
// agent carries it without the services). Plain values only, no Node.js module: the admin
// pages' forms check the same rules in the browser.

/** MySQL privilege names a database user may be granted (DESIGN.md "Records"); mysql.ts grants no other. */
export const PRIVILEGES = [
  "ALL PRIVILEGES",
  "ALTER",
  "ALTER ROUTINE",
  "CREATE",
  "CREATE ROUTINE",
  "CREATE TEMPORARY TABLES",
  "CREATE VIEW",
  "DELETE",
  "DROP",
  "EVENT",
  "EXECUTE",
  "INDEX",
  "INSERT",
  "LOCK TABLES",
  "REFERENCES",
  "SELECT",
  "SHOW VIEW",
  "TRIGGER",
  "UPDATE",
] as const;
export type Privilege = (typeof PRIVILEGES)[number];

/** The SSH public key types a keys file may hold (openssh.ts writes no other). */
export const SSH_KEY_TYPES = ["ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-rsa"] as const;
export type SshKeyType = (typeof SSH_KEY_TYPES)[number];

/** An account's PHP settings, as php-fpm.ts writes them into its pools. */
export interface PhpSettings {
  upload_max_filesize_mb: number;
  post_max_size_mb: number;
  memory_limit_mb: number;
  max_execution_time_s: number;
  max_input_vars: number;
  display_errors: boolean;
}

/** The server's own maxima of the PHP settings (php-fpm.ts refuses more); a plan may set lower ones. */
export const PHP_SETTING_MAXIMA = {
  upload_max_filesize_mb: 2048,
  post_max_size_mb: 2048,
  memory_limit_mb: 4096,
  max_execution_time_s: 3600,
  max_input_vars: 100_000,
} as const;
