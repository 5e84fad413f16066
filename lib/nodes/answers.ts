import { createPublicKey } from "node:crypto";
import { z } from "zod";
import type { OperationInput, OperationName, OperationOutput } from "@/lib/agent/operations";
import { type AppErrorCode, AppError } from "@/lib/errors";
import { NATIVE_PASSWORD_HASH } from "@/lib/provisioning/mysql";
import { SNAPSHOT_ID } from "@/lib/provisioning/restic";

// What a node answers, checked before the panel stores it or passes it on (docs/security.md
// "Nodes are not trusted"). A node's root may be someone else's: its answer is data about that
// node only, parsed like a request body — each operation's answer by a zod schema of its own
// (unknown fields dropped, strings and lists bounded, ids of their exact form) and then against
// what the panel asked: a name in the answer must be one the job named. An answer that is not
// that is refused whole (a 422 naming the node, its detail in the panel's log); nothing of it is
// kept or relayed. lib/nodes/hosts.ts runs every answer of another node through here; the
// panel's own machine (`local`) answers in this process.

const name = z.string().min(1).max(64);
const text = (max: number) => z.string().max(max);
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const size = z.number().finite().min(0).max(1e15);
const iso = z.iso.datetime({ offset: true });
/** A list whose every element is among `allowed` (what the job named), each at most once. */
const among = (allowed: readonly string[], what: string) =>
  z
    .array(z.string())
    .max(allowed.length)
    .refine((values) => values.every((value) => allowed.includes(value)) && new Set(values).size === values.length, `names ${what} the panel did not ask for`);
function isDkimPublicKey(base64: string): boolean {
  try {
    const key = createPublicKey({ key: Buffer.from(base64, "base64"), format: "der", type: "spki" });
    return key.asymmetricKeyType === "rsa" && key.asymmetricKeyDetails?.modulusLength === 2048 && key.export({ type: "spki", format: "der" }).toString("base64") === base64;
  } catch {
    return false;
  }
}
/** Accepted and dropped: an operation whose answer the panel does not use. */
const ignored = <T>(value: T) => z.unknown().transform(() => value);

const resticSnapshot = z.object({
  id: z.string().regex(SNAPSHOT_ID),
  short_id: text(64),
  time: text(64),
  paths: z.array(text(4096)).max(64),
  tags: z.array(text(256)).max(64).optional(),
});
const passwordHashes = (users: readonly string[]) =>
  z
    .record(z.string(), z.string().regex(NATIVE_PASSWORD_HASH).nullable())
    .refine((hashes) => Object.keys(hashes).every((user) => users.includes(user)), "names a database user the panel did not ask for");
/** A domain as a certificate folder is named: a host name, nothing that leaves CERTS_DIR. */
const HOSTNAME = /^[a-z0-9*](?:[a-z0-9.*-]{0,251}[a-z0-9])?$/i;
const certificateReport = z.object({ names: z.array(text(253)).max(100), expires_at: iso });

type Checks = { [Op in OperationName]: (input: OperationInput<Op>) => z.ZodType<OperationOutput<Op>> };

const CHECKS: Checks = {
  ping: () => z.object({ agent_version: text(40), protocol: z.number().int() }),
  batch: () => ignored(null),
  "account.provision": (input) =>
    z.object({
      username: z.literal(input.account.username),
      userCreated: z.boolean(),
      homeWasThere: z.boolean(),
      siteDomains: among(
        input.account.domains.map((domain) => domain.domain),
        "a domain",
      ),
    }),
  "account.unprovision": () => ignored(undefined),
  "account.home": () => ignored(undefined),
  "account.access": () => ignored(undefined),
  "account.keys": () => ignored(undefined),
  "account.password": () => ignored(undefined),
  "account.logins-suspended": () => ignored(undefined),
  "account.crontab": () => ignored(undefined),
  "account.quota": () => ignored(undefined),
  "account.remove-logins": () => ignored(undefined),
  "account.remove-crontab": () => ignored(undefined),
  "account.remove-home": () => ignored(undefined),
  "sites.apply": () => ignored(undefined),
  "sites.remove": () => ignored(undefined),
  "sites.all": () => ignored(undefined),
  "domain.root": () => ignored(undefined),
  "logins.all": () => ignored(undefined),
  "account.ensure": () => ignored(undefined),
  "mail.apply": () => z.object({ settle_ms: z.number().int().min(0).max(1100) }),
  "mail.remove": () => ignored(undefined),
  // One size per asked mailbox, by the address the panel asked for.
  "mail.usage": (input) =>
    z
      .array(z.object({ address: z.enum(input.mailboxes.length ? (input.mailboxes.map((mailbox) => `${mailbox.localPart}@${mailbox.domain}`) as [string, ...string[]]) : ["\0"]), mb: size }))
      .max(input.mailboxes.length),
  "mail.resync": () => ignored(undefined),
  // A DKIM public key goes into the account's zone: base64 of a 2048-bit RSA SubjectPublicKeyInfo, nothing else.
  "mail.dkim-key": () => z.object({ public_key: z.string().regex(/^[A-Za-z0-9+/]{300,600}={0,2}$/).refine(isDkimPublicKey, "is not a 2048-bit RSA public key").nullable() }),
  // Two counts, bounded: a node cannot make them anything but numbers for the admin to read.
  "mail.sending": () => z.object({ sent_last_hour: z.number().int().min(0).max(1e9), sent_today: z.number().int().min(0).max(1e9) }),
  // Its refusal (a name there without the panel's mark) comes as an error; a value is not read.
  "account.check-names": () => ignored(null),
  "node.reconcile": (input) => z.object({ failed: among(input.accounts.map((account) => account.account.username), "an account") }),
  "account.disk-usage": () => z.object({ mb: size.nullable(), enforced: z.boolean() }),
  // GoAccess's report of the account's own logs, shown to that account only: bounded, not read further.
  "visitors.report": () => z.record(text(256), z.unknown()).refine((report) => JSON.stringify(report).length <= 16 * 1024 * 1024, "is too large"),
  "databases.call": (input) =>
    z.object({
      configured: z.boolean(),
      value:
        input.call === "databaseSizesMb"
          ? z
              .array(z.tuple([z.string(), size]))
              .refine((pairs) => pairs.every(([database]) => (input.args[0] as string[]).includes(database)), "names a database the panel did not ask for")
              .optional()
          : z
              .unknown()
              .optional()
              .transform(() => undefined),
    }),
  "databases.remove": () => ignored(undefined),
  "databases.lock": () => ignored(undefined),
  "backup.parts": (input) =>
    z.object({
      objects: z
        .array(
          z.object({
            database: z.enum(input.databases.length ? (input.databases as [string, ...string[]]) : ["\0"]),
            type: z.enum(["PROCEDURE", "FUNCTION", "VIEW", "TRIGGER", "EVENT"]),
            name: name,
            definer: text(300),
          }),
        )
        .max(100_000),
      password_hashes: passwordHashes(input.database_users),
    }),
  "backup.records": () => ignored(null),
  "backup.snapshots": (input) =>
    z
      .array(resticSnapshot)
      .max(100_000)
      .refine((snapshots) => snapshots.every((snapshot) => input.tags.every((tag) => snapshot.tags?.includes(tag))), "holds a snapshot without the tags the panel asked for"),
  "backup.forget": () => ignored(null),
  "backup.stored-bytes": () => size.nullable(),
  "backup.read-records": () => text(64 * 1024 * 1024),
  "restore.home-path": () => z.boolean(),
  "restore.dump": () => z.object({ refused: count, present: z.array(text(200)).max(100_000) }),
  "move.snapshot": (input) =>
    z.object({
      home: z.string().regex(SNAPSHOT_ID).nullable(),
      dumps: z
        .array(z.object({ database: z.string(), snapshot: z.string().regex(SNAPSHOT_ID) }))
        .refine((dumps) => among(input.databases, "a database").safeParse(dumps.map((dump) => dump.database)).success, "names a database the panel did not ask for"),
      password_hashes: passwordHashes(input.database_users),
    }),
  "move.restore": () => ignored(null),
  "move.forget": () => ignored(null),
  "forward.apply": () => ignored(null),
  "forward.remove": () => ignored(null),
  "certificates.list": (input) =>
    z
      .array(z.object({ domain: z.string().regex(HOSTNAME), certificate: certificateReport.nullable() }))
      .max(100_000)
      .refine((entries) => input.domains === null || entries.every((entry) => input.domains!.includes(entry.domain)), "names a domain the panel did not ask for"),
  "certificates.request": () => z.string().max(16_384).startsWith("-----BEGIN CERTIFICATE REQUEST-----"),
  "certificates.challenge": () => ignored(undefined),
  "certificates.remove-challenges": () => ignored(undefined),
  "certificates.install": () => certificateReport,
  "certificates.remove": () => ignored(undefined),
  "certificates.reload": () => ignored(undefined),
  // The node's own description of itself, shown to administrators: an object, bounded.
  "metrics.system-info": () =>
    z.custom<OperationOutput<"metrics.system-info">>((value) => typeof value === "object" && value !== null && !Array.isArray(value) && JSON.stringify(value).length <= 256 * 1024),
};

/** `value`, node `node`'s answer to `op` with `input`, as its check lets it through; anything else is refused whole. */
export function checkedAnswer<Op extends OperationName>(node: string, op: Op, input: OperationInput<Op>, value: unknown): OperationOutput<Op> {
  const parsed = CHECKS[op](input).safeParse(value);
  if (parsed.success) return parsed.data as OperationOutput<Op>;
  console.error(`[nodes] ${node} answered ${op} with what the panel did not ask for: ${parsed.error.issues.slice(0, 3).map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`);
  throw new AppError("VALIDATION", `The node ${node} answered ${op} with what the panel did not ask for; nothing of it was kept (the panel's log says what)`);
}

/** The error codes a node may give for a refusal (lib/agent/protocol.ts JobResult); any other is a fault. */
const NODE_ERROR_CODES: readonly AppErrorCode[] = ["BAD_REQUEST", "NOT_FOUND", "CONFLICT", "VALIDATION", "UNAVAILABLE", "INTERNAL"];

/** A job's result as a node sends it: its id, and a value or a bounded refusal. */
export const jobResultSchema = z.union([
  z.object({ id: z.string().max(64), ok: z.literal(true), value: z.unknown() }),
  z.object({
    id: z.string().max(64),
    ok: z.literal(false),
    error: z.object({
      code: z.string().transform((code) => (NODE_ERROR_CODES.includes(code as AppErrorCode) ? (code as AppErrorCode) : "INTERNAL")),
      message: z.string().transform((message) => message.slice(0, 500)),
      fields: z
        .record(text(64), z.array(z.string().transform((message) => message.slice(0, 300))).max(5))
        .refine((fields) => Object.keys(fields).length <= 20)
        .optional()
        .catch(undefined),
    }),
  }),
]);

/** A heartbeat or hello as a node sends it (lib/agent/protocol.ts Heartbeat): bounded, or refused whole. */
export const heartbeatSchema = z.object({
  agent_version: text(40),
  protocol: z.number().int().min(0).max(1_000_000),
  disk: z.object({ total_bytes: size, used_bytes: size }).nullable().optional(),
  load: z.array(z.number().finite().min(0).max(1e6)).max(3).optional(),
});

/**
 * A node's word that a message of one of its accounts was refused for the sending limits
 * (lib/agent/protocol.ts `mail-limit`): bounded, or refused whole. Whose account it names is
 * checked against the node's own accounts where it is recorded (lib/email/sending.ts).
 */
export const mailLimitSchema = z.object({
  username: name,
  login: text(320),
  period: z.enum(["hour", "day"]),
  limit: count,
});
