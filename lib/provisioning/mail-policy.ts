import fs from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { env } from "@/lib/env";
import { linuxGroupIds } from "./passwd";
import { readIfExists, writeAtomically } from "./system";

// Sending limits on the machine that hosts the accounts (docs/email.md "Sending limits").
//
// Postfix's submission services ask this policy service at DATA (`smtpd_data_restrictions =
// check_policy_service unix:…`, Postfix's policy delegation protocol: SMTPD_POLICY_README) before
// they take a message from a logged-in sender. The service finds the login's account (a mailbox's
// address, or the account's own PHP login: lib/provisioning/mail.ts), counts the message's
// recipients against the account's plan (messages per hour and per day, each recipient one
// message: one message to 500 people is 500 messages), and answers DUNNO (the other restrictions
// decide) or `450 4.7.1 … sending limit of N per hour reached`, a temporary refusal: the client
// keeps the message and may try again once the hour has passed. A refusal is reported (onLimit):
// the panel flags the account for the admin.
//
// The counts are kept per account in minute buckets over the last 24 hours, in
// DATA_DIR/mail-sending.json (0600, root's), written before each answer that counted: they survive
// a restart of the panel (or of a node's agent). The accounts and their limits come with the
// accounts' mail state (mail.ts keeps it in DATA_DIR/mail-accounts/), so a node needs no panel
// database. The socket is Postfix's alone (0660, group postfix, in a folder only Postfix and root
// enter): a customer who could speak to it could count against another account. What arrives on it
// is data: lines of `name=value` (bounded), only the attributes read here are looked at, anything
// else ends the connection.

export interface SendingLimits {
  perHour: number | null;
  perDay: number | null;
}

/** One account's sending, as the panel shows it (GET /api/admin/accounts/{id} `mail`). */
export interface SendingFigures {
  sent_last_hour: number;
  sent_today: number;
}

/** What Postfix told the service about a message that went over a limit. */
export interface LimitReached {
  username: string;
  login: string;
  period: "hour" | "day";
  limit: number;
}

/** Told of each refusal (the panel flags the account); awaited before the refusal is answered. */
export type OnLimit = (event: LimitReached) => Promise<void>;

/** An account's logins and limits, as mail.ts renders them (setSendingAccounts). */
export interface SendingAccount {
  username: string;
  logins: string[];
  limits: SendingLimits;
}

const MINUTE_MS = 60_000;
const HOUR_MINUTES = 60;
const DAY_MINUTES = 24 * 60;
/** A policy request is a few dozen short lines; longer is not Postfix. */
const MAX_LINE = 2048;
const MAX_ATTRIBUTES = 100;
const LOGIN = /^[a-z0-9._@+-]{1,320}$/;
const USERNAME = /^[a-z][a-z0-9_]{0,31}$/;

const countsFile = () => path.join(env().dataDir, "mail-sending.json");

/** Per account: [minute since the epoch, recipients counted in it], oldest first, the last 24 h only. */
type Buckets = [number, number][];

interface State {
  counts: Map<string, Buckets> | null;
  accounts: Map<string, SendingAccount>;
  logins: Map<string, string>;
  saving: Promise<void>;
}
const globalForPolicy = globalThis as unknown as { __panelMailPolicy?: State };
const state = (globalForPolicy.__panelMailPolicy ??= { counts: null, accounts: new Map(), logins: new Map(), saving: Promise.resolve() });

const minuteNow = (now = Date.now()) => Math.floor(now / MINUTE_MS);

/** The counts as the file has them (read once); a file that is not ours to read is a fault, not zero. */
async function counts(): Promise<Map<string, Buckets>> {
  if (state.counts) return state.counts;
  const text = await readIfExists(countsFile());
  const loaded = new Map<string, Buckets>();
  if (text !== null) {
    const parsed = JSON.parse(text) as { accounts?: Record<string, unknown> };
    for (const [username, buckets] of Object.entries(parsed.accounts ?? {})) {
      if (!USERNAME.test(username) || !Array.isArray(buckets)) continue;
      loaded.set(
        username,
        buckets.filter((bucket): bucket is [number, number] => Array.isArray(bucket) && bucket.length === 2 && bucket.every((value) => Number.isSafeInteger(value) && value >= 0)),
      );
    }
  }
  state.counts ??= loaded;
  return state.counts;
}

/** Writes the counts; resolves once a write that began after this call has ended. */
function save(): Promise<void> {
  state.saving = state.saving
    .catch(() => undefined)
    .then(async () => {
      const accounts = Object.fromEntries(state.counts ?? []);
      await writeAtomically(countsFile(), JSON.stringify({ version: 1, accounts }), 0o600);
    });
  return state.saving;
}

const sumSince = (buckets: Buckets | undefined, since: number) => (buckets ?? []).reduce((total, [minute, count]) => (minute > since ? total + count : total), 0);

/** The account's counts now: recipients sent in the last 60 minutes and the last 24 hours. */
export async function sendingFigures(input: { username: string }): Promise<SendingFigures> {
  const buckets = (await counts()).get(input.username);
  const now = minuteNow();
  return { sent_last_hour: sumSince(buckets, now - HOUR_MINUTES), sent_today: sumSince(buckets, now - DAY_MINUTES) };
}

/**
 * The accounts whose logins may send here and their limits (mail.ts after each rebuild, from the
 * same states it rendered the passwd-file from): the only logins the service counts.
 */
export function setSendingAccounts(accounts: SendingAccount[]): void {
  const logins = new Map<string, string>();
  for (const account of accounts) for (const login of account.logins) logins.set(login, account.username);
  state.accounts = new Map(accounts.map((account) => [account.username, account]));
  state.logins = logins;
}

/** Counts of an account gone from this machine (terminated, moved away) are forgotten. */
export async function forgetSending(input: { username: string }): Promise<void> {
  if ((await counts()).delete(input.username)) await save();
}

/**
 * The decision on one message: `recipients` more for `login`'s account, or the refusal that says
 * which limit it would pass. Counted only when it is let through.
 */
export async function decide(login: string, recipients: number, onLimit: OnLimit, now = Date.now()): Promise<string> {
  const username = state.logins.get(login);
  // A login Dovecot let in that the panel's states do not name (a change in between): sent nothing
  // uncounted — the client tries again in a moment.
  if (username === undefined) return "451 4.3.0 The sending limits of this login are not known yet; try again later";
  const { limits } = state.accounts.get(username)!;
  const all = await counts();
  const minute = minuteNow(now);
  const buckets = (all.get(username) ?? []).filter(([at]) => at > minute - DAY_MINUTES);
  const checks: [LimitReached["period"], number | null, number][] = [
    ["hour", limits.perHour, sumSince(buckets, minute - HOUR_MINUTES)],
    ["day", limits.perDay, sumSince(buckets, minute - DAY_MINUTES)],
  ];
  for (const [period, limit, sent] of checks) {
    if (limit !== null && sent + recipients > limit) {
      // Reported before the answer: once the client hears the refusal, the flag is there.
      await onLimit({ username, login, period, limit }).catch((error) => console.error(`[mail] the refusal of ${username} was not reported:`, (error as Error).message));
      return `450 4.7.1 The sending limit of ${limit} messages per ${period} of this account is reached (${sent} sent, ${recipients} more asked); try again later`;
    }
  }
  const last = buckets.at(-1);
  if (last && last[0] === minute) last[1] += recipients;
  else buckets.push([minute, recipients]);
  all.set(username, buckets);
  await save();
  return "DUNNO";
}

/** One policy request's attributes (Postfix sends `name=value` lines, then an empty line). */
type Request = Map<string, string>;

async function answer(request: Request, onLimit: OnLimit): Promise<string> {
  if (request.get("request") !== "smtpd_access_policy") throw new Error("not an access policy request");
  // Counted once per message, at DATA, where Postfix knows how many recipients it took.
  if (request.get("protocol_state") !== "DATA") return "DUNNO";
  const login = (request.get("sasl_username") ?? "").toLowerCase();
  // Not logged in: not a submission (the submission services refuse it themselves).
  if (login === "") return "DUNNO";
  const recipients = request.get("recipient_count") ?? "";
  if (!LOGIN.test(login) || !/^[1-9][0-9]{0,5}$/.test(recipients)) return "451 4.3.0 The sending limits could not be checked; try again later";
  return decide(login, Number(recipients), onLimit);
}

export interface MailPolicy {
  socket: string;
  close(): Promise<void>;
}

/**
 * The policy service on the unix socket `socket` (its folder made root's and Postfix's group's,
 * 0750; the socket 0660). Requests on one connection are answered in order; a line longer than
 * MAX_LINE, more than MAX_ATTRIBUTES, or a line that is not `name=value` ends the connection
 * (Postfix then answers the client 451 itself: nothing passes uncounted).
 */
export async function startMailPolicy(socket: string, onLimit: OnLimit): Promise<MailPolicy> {
  await counts();
  const postfixGid = (await linuxGroupIds()).get("postfix");
  if (postfixGid === undefined) throw new Error("no group postfix for the mail policy socket (is Postfix installed?)");
  await fs.rm(socket, { force: true });
  const server = net.createServer((connection) => {
    let buffered = "";
    let request: Request = new Map();
    let lines = 0;
    let turn = Promise.resolve();
    connection.setEncoding("utf8");
    connection.on("error", () => undefined);
    connection.on("data", (chunk: string) => {
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        if (line === "") {
          const complete = request;
          request = new Map();
          lines = 0;
          turn = turn.then(async () => {
            const action = await answer(complete, onLimit).catch((error) => {
              console.error("[mail] policy request refused:", (error as Error).message);
              return null;
            });
            if (action === null) connection.destroy();
            else if (!connection.destroyed) connection.write(`action=${action}\n\n`);
          });
          continue;
        }
        const match = /^([a-z_]{1,64})=(.*)$/.exec(line);
        if (!match || line.length > MAX_LINE || ++lines > MAX_ATTRIBUTES) return void connection.destroy();
        request.set(match[1], match[2]);
      }
      if (buffered.length > MAX_LINE) connection.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => resolve());
  });
  await fs.chown(socket, 0, postfixGid);
  await fs.chmod(socket, 0o660);
  return { socket, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
