import { type InstalledCertificate, localMachine, tlsFilesFromEnv } from "@/lib/provisioning/acme";
import { backupParts, backupRecords, forgetSnapshots, readRecords, restoreDump, restoreHomePath, snapshotsWith, storedBytes } from "@/lib/provisioning/backup-runs";
import { applyForwards, removeForwards } from "@/lib/provisioning/forwards";
import { applyAccountSites, applyAllSites, createDomainRoot, provisionAccount, removeAccountSites, unprovisionAccount } from "@/lib/provisioning/hosting";
import { combinedReport, domainReport } from "@/lib/provisioning/goaccess";
import { homeOf, prepareHome } from "@/lib/provisioning/home-layout";
import { measureBytes } from "@/lib/provisioning/homes";
import { applyAccountMail, mailboxUsage, makeDkimKey, removeAccountMail, resyncMailboxes } from "@/lib/provisioning/mail";
import { sendingFigures } from "@/lib/provisioning/mail-policy";
import { checkAccountNames } from "@/lib/provisioning/marks";
import { quotaMountPoint } from "@/lib/provisioning/quota";
import {
  applyAllLogins,
  applyLoginAccess,
  installAccountCrontab,
  removeAccountCrontab,
  removeAccountHome,
  removeAccountLogins,
  setAccountPassword,
  setAccountQuota,
  setLoginsSuspended,
  writeAccountKeys,
} from "@/lib/provisioning/logins";
import { forgetMoveRepository, restoreMoveSnapshot, takeMoveSnapshot } from "@/lib/provisioning/move-runs";
import { callDatabaseServer, removeAccountDatabases, setDatabaseUsersLocked } from "@/lib/provisioning/mysql";
import { ensureAccount, reconcileAccounts } from "@/lib/provisioning/reconcile";
import { readSystemInfo } from "@/lib/provisioning/system-info";
import { AGENT_VERSION, PROTOCOL_VERSION } from "./protocol";

// The work a hosting server does for the panel, by name (docs/nodes.md "How it works"): each
// operation takes plain values from the panel's database and applies them through lib/provisioning
// with the machine's own settings. The panel's own machine (`local`) calls them in its process;
// another node's agent calls them for the jobs on its queue (lib/nodes/hosts.ts chooses). Each
// applies a desired state (a whole keys file, a whole crontab, every site of an account), never "do
// X once", so running a job twice — JetStream delivers at least once — changes nothing the second
// time.

/** This machine's certificates (docs/nodes.md "AutoSSL on nodes": the keys are made here and never leave). */
const certificates = () => localMachine(tlsFilesFromEnv());

/** A certificate as it travels in a job's result: JSON, the expiry as an ISO string. */
interface CertificateReport {
  names: string[];
  expires_at: string;
}
const report = (installed: InstalledCertificate | null): CertificateReport | null =>
  installed && { names: installed.names, expires_at: installed.expiresAt.toISOString() };

async function runSteps(input: { steps: { op: OperationName; args: unknown }[] }): Promise<null> {
  for (const step of input.steps) await (nodeOperations[step.op] as (args: unknown) => Promise<unknown>)(step.args);
  return null;
}

export const nodeOperations = {
  /** Who answers: the agent's version and protocol (a round trip through the node's queue). */
  ping: async (_input: null) => ({ agent_version: AGENT_VERSION, protocol: PROTOCOL_VERSION }),
  /** Several operations in order, as one job (a suspension queued while the node was away). */
  batch: runSteps,
  "account.provision": provisionAccount,
  "account.unprovision": unprovisionAccount,
  "account.home": async (input: { username: string }) => prepareHome(input.username),
  "account.access": applyLoginAccess,
  "account.keys": writeAccountKeys,
  "account.password": async (input: { username: string; password: string | null }) => {
    // A home from an older version (the customer's own) becomes root's first, as sshd's chroot needs.
    await prepareHome(input.username);
    await setAccountPassword(input);
  },
  "account.logins-suspended": setLoginsSuspended,
  "account.crontab": installAccountCrontab,
  "account.quota": setAccountQuota,
  "account.remove-logins": removeAccountLogins,
  "account.remove-crontab": removeAccountCrontab,
  "account.remove-home": removeAccountHome,
  "sites.apply": applyAccountSites,
  "sites.remove": removeAccountSites,
  "sites.all": async (input: { accounts: Parameters<typeof applyAllSites>[0] }) => applyAllSites(input.accounts),
  "domain.root": createDomainRoot,
  "logins.all": async (input: { accounts: Parameters<typeof applyAllLogins>[0] }) => applyAllLogins(input.accounts),
  "account.ensure": ensureAccount,
  // Email (lib/provisioning/mail.ts): the account's whole mail, applied; removed; its maildirs measured.
  "mail.apply": applyAccountMail,
  "mail.remove": removeAccountMail,
  "mail.usage": mailboxUsage,
  "mail.resync": resyncMailboxes,
  "mail.dkim-key": makeDkimKey,
  /** What the account sent here in the last hour and day (the sending limits' counts, lib/provisioning/mail-policy.ts). */
  "mail.sending": sendingFigures,
  /** A move's target, before anything is made: none of the account's names exists here unmarked (lib/provisioning/marks.ts). */
  "account.check-names": checkAccountNames,
  "node.reconcile": reconcileAccounts,
  /** The home's measured size (du, without following a link) and whether the kernel enforces the quota. */
  "account.disk-usage": async (input: { username: string }) => {
    const bytes = await measureBytes(homeOf(input.username));
    return { mb: bytes === null ? null : Math.round((bytes / 1024 / 1024) * 100) / 100, enforced: (await quotaMountPoint()) !== null };
  },
  /** GoAccess's report of one domain's access log, or the account's combined one (docs/web-hosting.md "Real provisioning"). */
  "visitors.report": async (input: { username: string; domain: string | null }) =>
    input.domain === null ? combinedReport(input.username) : domainReport(input.username, input.domain),
  "databases.call": callDatabaseServer,
  "databases.remove": removeAccountDatabases,
  "databases.lock": setDatabaseUsersLocked,
  // Backups and restores, in the machine's own repository (lib/provisioning/backup-runs.ts):
  // the long ones run as long jobs (their signal stops them at their deadline).
  "backup.parts": backupParts,
  "backup.records": backupRecords,
  "backup.snapshots": snapshotsWith,
  "backup.forget": forgetSnapshots,
  "backup.stored-bytes": storedBytes,
  "backup.read-records": readRecords,
  "restore.home-path": restoreHomePath,
  "restore.dump": restoreDump,
  // A move's passes, in the move's own repository (lib/provisioning/move-runs.ts).
  "move.snapshot": takeMoveSnapshot,
  "move.restore": restoreMoveSnapshot,
  "move.forget": forgetMoveRepository,
  /** A moved account's sites here become forwards to its new node; the forward's end removes them (lib/provisioning/forwards.ts). */
  "forward.apply": applyForwards,
  "forward.remove": removeForwards,
  /** The certificates under CERTS_DIR (`domains`, or every domain's folder), by domain. */
  "certificates.list": async (input: { domains: string[] | null }) =>
    [...(await certificates().certificates(input.domains ?? undefined))].map(([domain, installed]) => ({ domain, certificate: report(installed) })),
  /** A certificate signing request; its key stays on this machine (CERTS_DIR/<domain>/request.key). */
  "certificates.request": async (input: { domain: string; names: string[] }) => certificates().request(input.domain, input.names),
  /** An HTTP-01 challenge served from ACME_CHALLENGE_DIR, once this machine's web server answers it. */
  "certificates.challenge": async (input: { name: string; token: string; key_authorization: string }) =>
    certificates().answerChallenge(input.name, input.token, input.key_authorization),
  "certificates.remove-challenges": async (input: { tokens: string[] }) => certificates().removeChallenges(input.tokens),
  /** The chain the CA signed for the key waiting here, installed. */
  "certificates.install": async (input: { domain: string; chain: string }) => report(await certificates().install(input.domain, input.chain))!,
  "certificates.remove": async (input: { domains: string[] }) => certificates().remove(input.domains),
  /** The web server loads the certificates as installed now. */
  "certificates.reload": async (_input: null) => certificates().reload(),
  /** GET /api/metrics/system-info of this machine. */
  "metrics.system-info": async (_input: null) => readSystemInfo(),
};

export type OperationName = keyof typeof nodeOperations;
export type OperationInput<Name extends OperationName> = Parameters<(typeof nodeOperations)[Name]>[0];
export type OperationOutput<Name extends OperationName> = Awaited<ReturnType<(typeof nodeOperations)[Name]>>;
