import { integer, pgTable, text, unique } from "drizzle-orm/pg-core";
import { hostingAccounts } from "./accounts";
import { createdAt } from "./columns";

// The SSH public keys of hosting accounts (SFTP and SSH logins). The panel writes each account's
// keys into SSH_KEYS_DIR/<username> (lib/provisioning/openssh.ts); this table is the truth.
export const sshKeys = pgTable(
  "ssh_keys",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    accountId: integer("account_id")
      .notNull()
      .references(() => hostingAccounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    // "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa"…: the key's own type.
    keyType: text("key_type").notNull(),
    // The key's base64 blob as the customer sent it, checked (lib/ssh-keys/public-key.ts); no options, no comment.
    keyData: text("key_data").notNull(),
    // "SHA256:…" as ssh-keygen -l prints it.
    fingerprint: text("fingerprint").notNull(),
    createdAt: createdAt(),
  },
  (table) => [
    // Also the index of "the account's keys".
    unique("ssh_keys_account_fingerprint_unique").on(table.accountId, table.fingerprint),
  ],
);
