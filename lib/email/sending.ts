import { and, eq, inArray, isNull } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { hostingAccounts, nodes, plans } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { type AccountManager, ADMIN, managedBy } from "@/lib/accounts/manager";
import { notFound } from "@/lib/errors";
import { mailLimitSchema } from "@/lib/nodes/answers";
import { hostOfNode, nodeOfAccount } from "@/lib/nodes/hosts";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { mailServerEnabled } from "@/lib/provisioning/mail";
import { type LimitReached, type SendingLimits, startMailPolicy } from "@/lib/provisioning/mail-policy";
import { env } from "@/lib/env";
import type { AccountMailSending } from "./schemas";

// Outgoing mail's limits, as the panel sees them (docs/email.md "Sending limits"). The machine that
// hosts an account counts and refuses (lib/provisioning/mail-policy.ts, from the limits that come
// with the account's mail state); the panel keeps only the flag — set when the machine reports a
// refusal, lifted by an admin — and asks the machine for the counts when an admin looks.

/** The plan's limits of each of `accountIds`, as the machine takes them. */
export async function sendingLimitsOf(db: Queryable, accountIds: number[]): Promise<Map<number, SendingLimits>> {
  if (accountIds.length === 0) return new Map();
  const rows = await db
    .select({ id: hostingAccounts.id, perHour: plans.mailPerHour, perDay: plans.mailPerDay })
    .from(hostingAccounts)
    .innerJoin(plans, eq(plans.id, hostingAccounts.planId))
    .where(inArray(hostingAccounts.id, accountIds));
  return new Map(rows.map((row) => [row.id, { perHour: row.perHour, perDay: row.perDay }]));
}

/**
 * A refusal the panel's own machine (`local`) reported: the account named is flagged, once (an
 * audit row when it becomes flagged; a flag already up stays as it was). A name that is no account
 * of `local` changes nothing.
 */
export async function recordLocalLimitReached(db: Database, event: LimitReached): Promise<void> {
  const [local] = await db.select({ id: nodes.id }).from(nodes).where(eq(nodes.name, LOCAL_NODE));
  if (local) await recordLimitReached(db, local.id, event);
}

/**
 * A refusal a node reported (its `mail-limit` event, lib/nodes/events.ts): as a refusal of
 * `local`, but what the node sent is checked first (mailLimitSchema) and it flags only an account
 * on that node — a node's word reaches no other node's account (docs/security.md "Nodes are not
 * trusted").
 */
export async function recordNodeLimitReached(db: Database, nodeId: number, node: string, body: unknown): Promise<void> {
  const parsed = mailLimitSchema.safeParse(body);
  if (!parsed.success) {
    console.error(`[mail] ${node} sent a mail-limit event that is not one; dropped`);
    return;
  }
  await recordLimitReached(db, nodeId, parsed.data);
}

async function recordLimitReached(db: Database, nodeId: number, event: LimitReached): Promise<void> {
  await db.transaction(async (tx) => {
    const [flagged] = await tx
      .update(hostingAccounts)
      .set({ mailFlaggedAt: new Date() })
      .where(and(eq(hostingAccounts.username, event.username), eq(hostingAccounts.nodeId, nodeId), isNull(hostingAccounts.mailFlaggedAt)))
      .returning({ id: hostingAccounts.id });
    if (!flagged) return;
    await recordAudit(tx, { type: "system" }, {
      action: "hosting_account.mail_flag",
      targetType: "hosting_account",
      targetId: flagged.id,
      details: { login: event.login, period: event.period, limit: event.limit },
    });
  });
}

/**
 * At start, with MAIL_SERVER: the policy service of the panel's own machine (a node's agent runs its
 * own), its refusals flagging the accounts here. A service that cannot start stops the start: the
 * submission services would refuse every message (451) without it.
 */
export async function startLocalMailPolicy(db: Database): Promise<void> {
  if (!mailServerEnabled()) return;
  await startMailPolicy(env().mail!.policySocket, (event) => recordLocalLimitReached(db, event));
}

/** What the account's machine counted of the account's sending; null each when it did not answer (a node away). */
export interface MailSentCounts {
  sent_last_hour: number | null;
  sent_today: number | null;
}

/**
 * The counts the machine of the account `username` keeps (a call to a node, when the account is
 * on one): the Email tab shows them as they come (app/admin/accounts/[id]/email), the API in `mail`.
 */
export async function mailSentCounts(db: Queryable, accountId: number, username: string): Promise<MailSentCounts> {
  // The node's host without the account: a read that goes unanswered changes nothing there, so it
  // queues no reconcile of the account (hostOfAccount's, for changes).
  return hostOfNode(await nodeOfAccount(db, accountId)).run("mail.sending", { username }).catch((error) => {
    console.error(`[mail] the sending counts of ${username} were not read:`, (error as Error).message);
    return { sent_last_hour: null, sent_today: null };
  });
}

/** The account's `mail` as the panel's records hold it: everything but the machine's counts. */
export async function accountMailRecord(db: Queryable, accountId: number): Promise<{ username: string } & Omit<AccountMailSending, keyof MailSentCounts>> {
  const [row] = await db
    .select({ username: hostingAccounts.username, flaggedAt: hostingAccounts.mailFlaggedAt, perHour: plans.mailPerHour, perDay: plans.mailPerDay })
    .from(hostingAccounts)
    .innerJoin(plans, eq(plans.id, hostingAccounts.planId))
    .where(eq(hostingAccounts.id, accountId));
  if (!row) throw notFound("Hosting account");
  return {
    username: row.username,
    flagged: row.flaggedAt !== null,
    flagged_at: row.flaggedAt?.toISOString() ?? null,
    limits: { per_hour: row.perHour, per_day: row.perDay },
  };
}

/**
 * The account's `mail` (GET /api/admin/accounts/{id}): its flag, its plan's limits, and the counts
 * its machine keeps — null when the machine did not answer (a node away): the account is shown
 * all the same.
 */
export async function accountMailSending(db: Queryable, accountId: number): Promise<AccountMailSending> {
  const { username, ...record } = await accountMailRecord(db, accountId);
  return { ...record, ...(await mailSentCounts(db, accountId, username)) };
}

/** POST /api/admin/accounts/{id}/mail/unflag: the flag lifted (audited); not flagged: nothing changes. */
export async function unflagAccountMail(db: Database, accountId: number, actor: Actor, manager: AccountManager = ADMIN): Promise<{ message: string }> {
  return db.transaction(async (tx) => {
    const [account] = await tx
      .select({ id: hostingAccounts.id, username: hostingAccounts.username, flaggedAt: hostingAccounts.mailFlaggedAt })
      .from(hostingAccounts)
      .where(and(eq(hostingAccounts.id, accountId), managedBy(manager)))
      .for("update");
    if (!account) throw notFound("Hosting account");
    if (account.flaggedAt === null) return { message: `The mail of ${account.username} is not flagged` };
    await tx.update(hostingAccounts).set({ mailFlaggedAt: null }).where(eq(hostingAccounts.id, accountId));
    await recordAudit(tx, actor, {
      action: "hosting_account.mail_unflag",
      targetType: "hosting_account",
      targetId: accountId,
      details: { flagged_at: account.flaggedAt.toISOString() },
    });
    return { message: `The mail flag of ${account.username} is lifted` };
  });
}
