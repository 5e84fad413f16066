import { createPrivateKey, createPublicKey, generateKeyPair, randomBytes, X509Certificate } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { mailboxPasswordHash } from "./mail-password";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { certificateFiles } from "./acme";
import { makeDirectoryIn, openDirectoryIn, openFileIn, openTrustedDirectory, writeFileIn } from "./home-files";
import { homeOf } from "./home-layout";
import { forgetSending, type SendingLimits, setSendingAccounts } from "./mail-policy";
import { assertPanelUser, panelUsernames } from "./marks";
import { linuxGroupIds, linuxPasswdEntries } from "./passwd";
import { DKIM_SELECTOR, LOCAL_PART, MAIL_DOMAIN, MAX_QUOTA_MB, MAX_TARGETS, mailHostOf, PHP_MAIL_CONFIG, TARGET_ADDRESS } from "./rules";
import { checkedHostName, checkedInteger, checkedIpAddress, checkedPathInside, checkedString } from "./render-checks";
import { exitReason, makeDirectories, readIfExists, runChild, runCommand, toolEnv, writeAtomically, writeFilesAtomically } from "./system";

// Email on the machine that hosts the accounts (docs/email.md "What the panel writes where"):
// each account's mail as the panel's database says it (AccountMail, plain values sent with the
// account's state, lib/provisioning/reconcile.ts), kept here as DATA_DIR/mail-accounts/<user>.json,
// and from all of them the machine's files Postfix and Dovecot read:
//   MAIL_MAPS_DIR/virtual_domains     Postfix virtual_mailbox_domains (hash: table, postmap)
//   MAIL_MAPS_DIR/virtual_mailboxes   Postfix virtual_mailbox_maps: the addresses that have a mailbox
//   MAIL_MAPS_DIR/virtual_aliases     Postfix virtual_alias_maps: aliases, catch-alls (@domain), and
//                                     each mailbox to itself, so a catch-all never takes its mail
//   MAIL_MAPS_DIR/passwd              Dovecot passwd-file (passdb and userdb): address, password
//                                     hash, the uid/gid of the account's Linux user on THIS machine,
//                                     home = the maildir, HOME/mail/<domain>/<local-part>
//   MAIL_MAPS_DIR/sender_logins       Postfix smtpd_sender_login_maps: `@<domain> <mailbox>,…`, the
//                                     SASL logins that may send as the domain (its account's mailboxes)
//   MAIL_MAPS_DIR/dkim_selectors      rspamd's dkim_signing selector_map: `<domain> <selector>`, the
//                                     key each domain signs with
//   MAIL_MAPS_DIR/moving_domains      Postfix check_recipient_access: 450 for a domain in a move's
//                                     final pass and switch (its mail deferred: docs/email.md "Moves")
//   MAIL_MAPS_DIR/relay_domains       Postfix relay_domains and transport_maps: a moved account's
//   MAIL_MAPS_DIR/transport           domains, relayed to the move's target while the forward lasts
//   MAIL_MAPS_DIR/sni                 Postfix tls_server_sni_maps: `mail.<domain>` → the key and chain
//                                     of its certificate in CERTS_DIR/mail.<domain>/, `postmap -F`ed
//                                     (the .db holds the key: root's alone); `# <fingerprint>` lines
//                                     make a renewed certificate a changed table
//   MAIL_MAPS_DIR/dovecot-sni.conf    Dovecot's `local_name mail.<domain> { ssl_cert ssl_key }` for
//                                     the same certificates (the admin's Dovecot configuration
//                                     includes it; reloaded when it changes)
//   MAIL_MAPS_DIR/dkim/<domain>.<selector>.key   the DKIM private keys, made here (makeDkimKey):
//                                     they never leave this machine; only the public key is answered
//   HOME/.msmtprc                     the account's PHP login (its Linux user's alone, 0400): PHP's
//                                     mail() sends through msmtp with it (docs/email.md "PHP's
//                                     mail()"); made here, its hash kept in DATA_DIR/mail-php/<user>
// A node has no panel database: everything comes in the job. Every value is checked again here
// before it becomes a line (render-checks.ts); each table is built under a temporary name,
// `postmap`ed, and both files renamed over the old ones (old or new, never half); a refusal of
// `postmap` leaves the old tables and the account's old state, and the change fails.

/** One mailbox as the machine needs it: the hash only, never the password. */
export interface MailboxState {
  localPart: string;
  domain: string;
  /** "{SHA512-CRYPT}$6$…" (lib/provisioning/mail-password.ts). */
  passwordHash: string;
  quotaMb: number;
  enabled: boolean;
}

/** An alias, or the domain's catch-all (localPart ""). */
export interface AliasState {
  localPart: string;
  domain: string;
  targets: string[];
}

/** The DKIM key a mail domain signs with (its private key made here by makeDkimKey). */
export interface DkimState {
  domain: string;
  selector: string;
}

/** An account's mail, as its records say. */
export interface AccountMail {
  domains: string[];
  mailboxes: MailboxState[];
  aliases: AliasState[];
  /** Absent in states kept by a version before DKIM: none signs. */
  dkim?: DkimState[];
  /** The plan's sending limits (./mail-policy.ts); absent in states from before them: unlimited. */
  limits?: SendingLimits;
  /**
   * The account's other domains (its sites', no mail domain): its PHP login may send as them too,
   * so a site's mail() works without mail hosted here (docs/email.md "PHP's mail()"). Absent in
   * states from before: none.
   */
  sendingDomains?: string[];
}

export const mailServerEnabled = () => env().mail !== null;

export { DKIM_SELECTOR, LOCAL_PART, MAIL_DOMAIN, MAX_QUOTA_MB, MAX_TARGETS, TARGET_ADDRESS };

/** What a passwd-file line may carry as the password: Dovecot's SHA512-CRYPT of crypt(3). */
const FINGERPRINT = /^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/;
export const PASSWORD_HASH = /^\{SHA512-CRYPT\}\$6\$(?:rounds=[1-9][0-9]{3,8}\$)?[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{86}$/;
const RENDERER = "mail tables";
const domainOf = (value: unknown) => {
  checkedHostName(RENDERER, "mail domain", value);
  return checkedString(RENDERER, "mail domain", value, MAIL_DOMAIN, "a mail domain is lower-case letters, digits and inner - in dot-separated labels");
};
const localPartOf = (value: unknown) => checkedString(RENDERER, "local part", value, LOCAL_PART, "a local part is a-z, 0-9 and inner . _ - (no ..), at most 64");
const selectorOf = (value: unknown) => checkedString(RENDERER, "DKIM selector", value, DKIM_SELECTOR, "a DKIM selector is a lower-case letter, then letters, digits and inner -, at most 63");
const targetOf = (value: unknown) => checkedString(RENDERER, "alias target", value, TARGET_ADDRESS, "a target is one lower-case address, local@domain");

/** A PHP login is the account's Linux username: no @, so never a mailbox's address. */
const PHP_LOGIN = /^[a-z][a-z0-9_]{0,31}$/;
/** Where the PHP login's (empty) mail folder would be, in HOME/mail: no domain is named so (no dot). */
const PHP_LOGIN_FOLDER = "_php";

/** The mark on every file the panel writes here (./marks.ts): a file without it is not the panel's. */
export const MAIL_HEADER = "# Written by the hosting panel from its records; edit through the panel.";

// ---- Rendering (pure) ----

/** What one account's mail makes on this machine: its Linux ids, home, and suspension. */
export interface RenderedAccount {
  username: string;
  uid: number;
  gid: number;
  suspended: boolean;
  /** In its move's final pass and switch: mail for its domains deferred here, not delivered (see `moving_domains`). */
  held?: boolean;
  mail: AccountMail;
  /** The hash of the account's PHP login (its username, no @: no mailbox's address), null: none here. */
  phpLoginHash?: string | null;
}

export interface MailTables {
  virtual_domains: string;
  virtual_mailboxes: string;
  virtual_aliases: string;
  passwd: string;
  sender_logins: string;
  dkim_selectors: string;
  /** Postfix's check_recipient_access: a 450 for every domain moving away from this machine. */
  moving_domains: string;
  /** Postfix's relay_domains: the domains whose mail this machine relays to a move's target. */
  relay_domains: string;
  /** Postfix's transport_maps: where each of those goes (`relay:[address]:port`). */
  transport: string;
  /** Postfix's tls_server_sni_maps (postmap -F): each mail host's key and chain, by name. */
  sni: string;
  /** Dovecot's `local_name` blocks: the same certificates for IMAP and POP3. */
  dovecot_sni: string;
}

/**
 * A certificate on this machine for a mail domain's host name, `mail.<domain>` (docs/email.md
 * "TLS"): its files are CERTS_DIR/<host>/privkey.pem and fullchain.pem (acme.ts certificateFiles).
 */
export interface MailHostCertificate {
  host: string;
  /** The chain's leaf's SHA-256 fingerprint (X509Certificate.fingerprint256). */
  fingerprint: string;
}

/** A domain this machine forwards to a move's target (./forwards.ts); target null: a forward kept by a version before mail was relayed. */
export interface ForwardedDomain {
  domain: string;
  target: string | null;
}

/** The folder of the home that holds the account's maildirs. */
export const MAIL_FOLDER = "mail";

/** The maildir of a mailbox: HOME_ROOT/<user>/mail/<domain>/<local-part>. */
export const maildirOf = (username: string, domain: string, localPart: string) => path.join(homeOf(username), MAIL_FOLDER, domain, localPart);

/**
 * The machine's tables from every account's mail. Throws (naming the value) when any value
 * fails its rule, or when two accounts claim one domain: nothing is written then.
 * `forwarded`: the domains this machine forwards to a move's target (./forwards.ts). While the
 * account's mail is still here (the switch, before the cleaning took it) their mail is deferred;
 * once it is gone, relayed to the target on `smtpPort` (the target serves it by then).
 */
export function renderMailTables(
  accounts: RenderedAccount[],
  forwarded: ForwardedDomain[] = [],
  smtpPort = 25,
  certificates: MailHostCertificate[] = [],
): MailTables {
  const domains = new Map<string, string>();
  /** The domains only a PHP login sends as (sendingDomains), by account: no one else's, as a mail domain is. */
  const phpDomains = new Map<string, string>();
  const mailboxLines: string[] = [];
  const aliasLines: string[] = [];
  const passwdLines: string[] = [];
  const selectorLines: string[] = [];
  const senderLines: string[] = [];
  const moving = new Set<string>();
  for (const account of accounts) {
    const uid = checkedInteger(RENDERER, "uid", account.uid, 1, 2 ** 31 - 2);
    const gid = checkedInteger(RENDERER, "gid", account.gid, 1, 2 ** 31 - 2);
    const own = new Set<string>();
    for (const value of account.mail.domains) {
      const domain = domainOf(value);
      const holder = domains.get(domain) ?? phpDomains.get(domain);
      if (holder !== undefined && holder !== account.username) throw new Error(`${RENDERER}: the mail domain ${domain} is claimed by ${holder} and ${account.username}`);
      domains.set(domain, account.username);
      own.add(domain);
      if (account.held) moving.add(domain);
    }
    const phpOnly = new Set<string>();
    for (const value of account.mail.sendingDomains ?? []) {
      const domain = domainOf(value);
      if (own.has(domain)) continue;
      const holder = domains.get(domain) ?? phpDomains.get(domain);
      if (holder !== undefined && holder !== account.username) throw new Error(`${RENDERER}: the domain ${domain} is claimed by ${holder} and ${account.username}`);
      phpDomains.set(domain, account.username);
      phpOnly.add(domain);
    }
    const ownDomain = (value: unknown) => {
      const domain = domainOf(value);
      if (!own.has(domain)) throw new Error(`${RENDERER}: ${domain} is not a mail domain of ${account.username}`);
      return domain;
    };
    for (const mailbox of account.mail.mailboxes) {
      const address = `${localPartOf(mailbox.localPart)}@${ownDomain(mailbox.domain)}`;
      const hash = checkedString(RENDERER, "password hash", mailbox.passwordHash, PASSWORD_HASH, "a password hash is Dovecot's {SHA512-CRYPT}");
      const quota = checkedInteger(RENDERER, "quota", mailbox.quotaMb, 1, MAX_QUOTA_MB);
      const home = checkedPathInside(RENDERER, "maildir", maildirOf(account.username, mailbox.domain, mailbox.localPart), env().homeRoot);
      mailboxLines.push(`${address} OK`);
      aliasLines.push(`${address} ${address}`);
      // Fields: user:password:uid:gid:gecos:home:shell:extra. A disabled mailbox, or any of a
      // suspended account, keeps receiving (userdb) and cannot log in (nologin: IMAP, POP3, SMTP AUTH).
      const extra = [`userdb_quota_rule=*:storage=${quota}M`, ...(mailbox.enabled && !account.suspended ? [] : ["nologin=y"])];
      passwdLines.push(`${address}:${hash}:${uid}:${gid}::${home}::${extra.join(" ")}`);
    }
    if (account.phpLoginHash) {
      // The PHP login sends only (SMTP AUTH as the account, counted against its limits); its
      // "maildir" is a folder of the account's mail that nothing delivers to.
      const login = checkedString(RENDERER, "PHP login", account.username, PHP_LOGIN, "a PHP login is the account's username");
      const hash = checkedString(RENDERER, "password hash", account.phpLoginHash, PASSWORD_HASH, "a password hash is Dovecot's {SHA512-CRYPT}");
      const home = checkedPathInside(RENDERER, "maildir", path.join(homeOf(account.username), "mail", PHP_LOGIN_FOLDER), env().homeRoot);
      passwdLines.push(`${login}:${hash}:${uid}:${gid}::${home}::userdb_quota_rule=*:storage=1M${account.suspended ? " nologin=y" : ""}`);
    }
    for (const alias of account.mail.aliases) {
      const domain = ownDomain(alias.domain);
      const address = alias.localPart === "" ? `@${domain}` : `${localPartOf(alias.localPart)}@${domain}`;
      if (!Array.isArray(alias.targets) || alias.targets.length < 1 || alias.targets.length > MAX_TARGETS) throw new Error(`${RENDERER}: the alias ${address} has no targets or too many`);
      aliasLines.push(`${address} ${alias.targets.map(targetOf).join(",")}`);
    }
    // Every mailbox of the account may send as any of its domains, and no one else may: a login
    // that owns no line for the sender's domain is refused (reject_sender_login_mismatch).
    const logins = [...account.mail.mailboxes.map((mailbox) => `${mailbox.localPart}@${mailbox.domain}`), ...(account.phpLoginHash ? [account.username] : [])];
    if (logins.length > 0) for (const domain of own) senderLines.push(`@${domain} ${logins.join(",")}`);
    // Its sites' other domains: its PHP login alone (no mailbox is of them).
    if (account.phpLoginHash) for (const domain of phpOnly) senderLines.push(`@${domain} ${account.username}`);
    const signing = new Set<string>();
    for (const key of account.mail.dkim ?? []) {
      const domain = ownDomain(key.domain);
      if (signing.has(domain)) throw new Error(`${RENDERER}: the mail domain ${domain} has two DKIM selectors to sign with`);
      signing.add(domain);
      selectorLines.push(`${domain} ${selectorOf(key.selector)}`);
    }
  }
  const relayed = new Map<string, string>();
  for (const forward of forwarded) {
    const domain = domainOf(forward.domain);
    if (domains.has(domain) || forward.target === null) moving.add(domain);
    else relayed.set(domain, checkedIpAddress(RENDERER, "relay target", forward.target, 4));
  }
  const port = checkedInteger(RENDERER, "relay port", smtpPort, 1, 65535);
  const sniLines: string[] = [];
  const localNames: string[] = [];
  const mailHosts = new Set([...domains.keys()].map(mailHostOf));
  for (const certificate of certificates) {
    const host = checkedHostName(RENDERER, "mail host", certificate.host);
    if (!mailHosts.has(host)) throw new Error(`${RENDERER}: ${host} is no mail domain's host name here`);
    const fingerprint = checkedString(RENDERER, "certificate fingerprint", certificate.fingerprint, FINGERPRINT, "a fingerprint is 32 hex bytes with colons");
    const files = certificateFiles(env().certsDir, host);
    // Postfix wants the key first, then the chain (tls_server_sni_maps, as smtpd_tls_chain_files).
    sniLines.push(`# ${host} ${fingerprint}\n${host} ${files.keyPath} ${files.certificatePath}`);
    localNames.push(`# ${fingerprint}\nlocal_name ${host} {\n  ssl_cert = <${files.certificatePath}\n  ssl_key = <${files.keyPath}\n}`);
  }
  const table = (lines: string[]) => `${MAIL_HEADER}\n${[...lines].sort().join("\n")}${lines.length ? "\n" : ""}`;
  return {
    virtual_domains: table([...domains.keys()].map((domain) => `${domain} OK`)),
    virtual_mailboxes: table(mailboxLines),
    virtual_aliases: table(aliasLines),
    passwd: table(passwdLines),
    sender_logins: table(senderLines),
    dkim_selectors: table(selectorLines),
    // A sender's server keeps a deferred message and tries again; by then the domain's MX (its
    // TTL lowered for the move) names the target. Nothing lands in a maildir left behind.
    moving_domains: table([...moving].map((domain) => `${domain} 450 4.3.2 Mail for ${domain} is moving to another server; try again later`)),
    relay_domains: table([...relayed.keys()].map((domain) => `${domain} OK`)),
    transport: table([...relayed].map(([domain, target]) => `${domain} relay:[${target}]:${port}`)),
    sni: table(sniLines),
    dovecot_sni: table(localNames),
  };
}

// ---- The machine's files ----

const accountsDir = () => path.join(env().dataDir, "mail-accounts");
const accountFile = (username: string) => path.join(accountsDir(), `${username}.json`);
export const POSTFIX_TABLES = ["virtual_domains", "virtual_mailboxes", "virtual_aliases", "sender_logins", "moving_domains", "relay_domains", "transport", "sni"] as const;
/** Tables whose values name files that `postmap -F` stores the contents of (keys: the .db is root's alone). */
const FILE_CONTENT_TABLES: ReadonlySet<string> = new Set(["sni"]);

interface KeptState {
  suspended: boolean;
  held?: boolean;
  mail: AccountMail;
}

/** The account states kept here, by username (what every rebuild renders from). */
async function keptStates(): Promise<Map<string, KeptState>> {
  const names = await fs.readdir(accountsDir()).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [] as string[];
    throw error;
  });
  const states = new Map<string, KeptState>();
  for (const name of names) {
    const match = /^([a-z][a-z0-9_]{0,31})\.json$/.exec(name);
    if (!match) continue;
    const text = await readIfExists(path.join(accountsDir(), name));
    if (text !== null) states.set(match[1], JSON.parse(text));
  }
  return states;
}

// One rebuild at a time on this machine: a job and a reconcile, or two accounts' changes, would
// otherwise interleave their temporary tables.
let queue: Promise<unknown> = Promise.resolve();
function inTurn<T>(work: () => Promise<T>): Promise<T> {
  const run = queue.then(work, work);
  queue = run.catch(() => undefined);
  return run;
}

/** Whether a written table is the panel's: missing, or starting with its mark. */
async function assertOwnTable(file: string): Promise<void> {
  const contents = await readIfExists(file);
  if (contents !== null && !contents.startsWith(`${MAIL_HEADER}\n`)) {
    throw new AppError("CONFLICT", `This server has ${path.basename(file)} in the mail tables' folder, which the panel did not make; the panel leaves it alone`);
  }
}

/**
 * Dovecot's auth process reads the passwd-file again only when its mtime (whole seconds) or size
 * differs from the copy it holds, and looks at the file at most once a second
 * (src/auth/db-passwd-file.c, passwd_file_sync). So each new file gets an mtime later than the
 * one it replaces — a new password's hash has the old one's length — and a change counts for every
 * lookup from the next whole second on (msUntilSeen()).
 */
async function markPasswdChanged(file: string, previousMtimeMs: number | null): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  const seconds = previousMtimeMs === null ? now : Math.max(now, Math.floor(previousMtimeMs / 1000) + 1);
  await fs.utimes(file, seconds, seconds);
  return Date.now();
}

/** How long from now until every Dovecot lookup sees a passwd-file written at `writtenAt` (ms): the next whole second. */
function msUntilSeen(writtenAt: number): number {
  return Math.min(1100, Math.max(0, Math.floor(writtenAt / 1000) * 1000 + 1000 + 20 - Date.now()));
}

/**
 * Renders every kept account's mail and replaces what changed: each Postfix table postmap'ed under
 * a temporary name and renamed with its .db, Dovecot's passwd-file renamed (markPasswdChanged),
 * then Postfix reloaded. Accounts whose Linux user is not the panel's, or missing, get nothing
 * here (logged); so does an account a renderer check refuses (logged: one bad row must not keep
 * every other account's mail from being served) — except `changing`, the account whose change this
 * is, whose refusal fails the change. Returns when the passwd-file was written (ms), null when it
 * was not.
 */
async function rebuild(changing: string | null): Promise<number | null> {
  const config = env().mail!;
  const [states, users, groups, marked] = await Promise.all([keptStates(), linuxPasswdEntries(), linuxGroupIds(), panelUsernames()]);
  const accounts: RenderedAccount[] = [];
  const claimed = new Map<string, string>();
  for (const [username, state] of states) {
    const user = users.get(username);
    if (!user || !marked.has(username)) {
      console.error(`[mail] ${username}: no Linux user of the panel's here; its mail is not served`);
      continue;
    }
    const account = { username, uid: user.uid, gid: user.gid, suspended: state.suspended, held: state.held === true, mail: state.mail };
    try {
      // Its own values, and no domain another account here has claimed (each account alone: linear in their number).
      renderMailTables([account]);
      const named = [...state.mail.domains, ...(state.mail.sendingDomains ?? [])];
      const taken = named.find((domain) => claimed.has(domain));
      if (taken) throw new Error(`${RENDERER}: the domain ${taken} is claimed by ${claimed.get(taken)} and ${username}`);
      for (const domain of named) claimed.set(domain, username);
      accounts.push(account);
    } catch (error) {
      if (username === changing) throw error;
      console.error(`[mail] ${username}: not served:`, (error as Error).message);
    }
  }
  // A domain signs only with a key that is here: a key file missing (a move's target, before the
  // key came with the account) signs nothing rather than making rspamd fail on it.
  for (const account of accounts) {
    const present: DkimState[] = [];
    for (const key of account.mail.dkim ?? []) {
      if (await fs.access(dkimKeyPath(key.domain, key.selector)).then(() => true, () => false)) present.push(key);
      else console.error(`[mail] ${account.username}: no DKIM key ${key.selector} for ${key.domain} here; its mail is not signed`);
    }
    account.mail = { ...account.mail, dkim: present };
    account.phpLoginHash = (await readIfExists(phpLoginHashFile(account.username)))?.trim() || null;
  }
  const certificates = await mailHostCertificates(accounts.flatMap((account) => account.mail.domains));
  const tables = renderMailTables(accounts, await forwardedDomains(), config.smtpPort, certificates);
  // Postfix and Dovecot's own user pass through it (mkdir's mode alone is cut by the panel's umask).
  await makeDirectories(config.mapsDir, 0o755);
  const dovecotGid = groups.get(config.dovecotGroup);
  if (dovecotGid === undefined) throw new Error(`no group ${config.dovecotGroup} for Dovecot's passwd-file`);
  // Every changed table postmap'ed first, then all renamed: a refusal leaves all the old ones.
  const changed: { file: string; temporary: string }[] = [];
  try {
    for (const name of POSTFIX_TABLES) {
      const file = path.join(config.mapsDir, name);
      if ((await readIfExists(file)) === tables[name] && (await fs.access(`${file}.db`).then(() => true, () => false))) continue;
      await assertOwnTable(file);
      const temporary = path.join(config.mapsDir, `.${name}.new`);
      await fs.rm(`${temporary}.db`, { force: true });
      changed.push({ file, temporary });
      await writeAtomically(temporary, tables[name], 0o640);
      const fileContents = FILE_CONTENT_TABLES.has(name);
      const refused = await runPostmap(config.postmapCommand, `hash:${temporary}`, fileContents);
      if (refused !== null) {
        console.error(`[mail] postmap refused ${name}: ${refused}`);
        throw new AppError("VALIDATION", `The mail server refused the new ${name} table; nothing was changed`);
      }
      await fs.chmod(`${temporary}.db`, fileContents ? 0o600 : 0o640);
    }
  } catch (error) {
    for (const { temporary } of changed) for (const file of [temporary, `${temporary}.db`]) await fs.rm(file, { force: true });
    throw error;
  }
  for (const { file, temporary } of changed) {
    await fs.rename(`${temporary}.db`, `${file}.db`);
    await fs.rename(temporary, file);
  }
  const postfixChanged = changed.length > 0;
  const passwdFile = path.join(config.mapsDir, "passwd");
  let passwdWrittenAt: number | null = null;
  if ((await readIfExists(passwdFile)) !== tables.passwd) {
    await assertOwnTable(passwdFile);
    const previous = await fs.stat(passwdFile).catch(() => null);
    // Hashes: root's and Dovecot's group's alone.
    await writeFilesAtomically([{ path: passwdFile, contents: tables.passwd, mode: 0o640, owner: { uid: 0, gid: dovecotGid } }]);
    passwdWrittenAt = await markPasswdChanged(passwdFile, previous?.mtimeMs ?? null);
  }
  // rspamd reads its selector map again by itself when the file changes (map_watch_interval).
  const selectorsFile = path.join(config.mapsDir, "dkim_selectors");
  if ((await readIfExists(selectorsFile)) !== tables.dkim_selectors) {
    await assertOwnTable(selectorsFile);
    await writeFilesAtomically([{ path: selectorsFile, contents: tables.dkim_selectors, mode: 0o640, owner: { uid: 0, gid: await dkimGroupId() } }]);
  }
  // Dovecot reads its configuration, with the certificates it names, when it (re)loads.
  const sniFile = path.join(config.mapsDir, "dovecot-sni.conf");
  if ((await readIfExists(sniFile)) !== tables.dovecot_sni) {
    await assertOwnTable(sniFile);
    await writeAtomically(sniFile, tables.dovecot_sni, 0o644);
    const result = await doveadm(["reload"]);
    if (result.code !== 0) console.error(`[mail] Dovecot was not reloaded for its certificates: ${exitReason(result)}`);
  }
  if (postfixChanged && config.reloadCommand) {
    const failure = await runCommand(config.reloadCommand);
    if (failure) console.error(`[mail] ${failure}`);
  }
  // The policy service counts exactly the logins the passwd-file now has, against these limits.
  setSendingAccounts(
    accounts.map((account) => ({
      username: account.username,
      logins: [...account.mail.mailboxes.map((mailbox) => `${mailbox.localPart}@${mailbox.domain}`), ...(account.phpLoginHash ? [account.username] : [])],
      limits: account.mail.limits ?? { perHour: null, perDay: null },
    })),
  );
  return passwdWrittenAt;
}

// ---- PHP's login (docs/email.md "PHP's mail()") ----

const phpLoginHashFile = (username: string) => path.join(env().dataDir, "mail-php", username);

/** msmtp's configuration for the account's PHP: the machine's submission service, its PHP login. */
export function renderMsmtpConfig(username: string, password: string, port: number): string {
  const login = checkedString("msmtp configuration", "PHP login", username, PHP_LOGIN, "a PHP login is the account's username");
  const secret = checkedString("msmtp configuration", "password", password, /^[A-Za-z0-9_-]{32}$/, "a password the panel made");
  checkedInteger("msmtp configuration", "port", port, 1, 65535);
  // Loopback to this machine's own submission service: its certificate names the machine's mail
  // host, not 127.0.0.1, and no one is between the two ends to check it against.
  return `# Written by the hosting panel: PHP's mail() sends through this, as ${login} (docs/email.md "PHP's mail()").
defaults
auth on
tls on
tls_starttls on
tls_certcheck off
account default
host 127.0.0.1
port ${port}
user ${login}
password ${secret}
`;
}

/**
 * The account's PHP login, made when it has none here: a random password in HOME/.msmtprc (its
 * Linux user's, 0400, in the home, which is root's: outside every web root, and no link can be
 * planted in its place), its hash in DATA_DIR/mail-php/<username> (root's), which every rebuild
 * renders as a passwd-file line. A move's target or a restored machine makes a new one.
 */
async function ensurePhpLogin(username: string, owner: { uid: number; gid: number }): Promise<void> {
  const homes = await openTrustedDirectory(env().homeRoot);
  if (!homes) throw new Error(`no directory ${env().homeRoot} for the homes`);
  try {
    const home = await openDirectoryIn(homes, username);
    if (!home) throw new Error(`no home for ${username}`);
    try {
      const present = await openFileIn(home, PHP_MAIL_CONFIG);
      await present?.close();
      if (present && (await readIfExists(phpLoginHashFile(username))) !== null) return;
      const password = randomBytes(24).toString("base64url");
      await writeFileIn(home, PHP_MAIL_CONFIG, renderMsmtpConfig(username, password, env().mail!.submissionPort), { ...owner, mode: 0o400 });
      await fs.mkdir(path.dirname(phpLoginHashFile(username)), { recursive: true, mode: 0o700 });
      await writeAtomically(phpLoginHashFile(username), `${mailboxPasswordHash(password)}\n`, 0o600);
    } finally {
      await home.close();
    }
  } finally {
    await homes.close();
  }
}

// ---- DKIM keys ----

const dkimDir = () => path.join(env().mail!.mapsDir, "dkim");
const dkimKeyPath = (domain: string, selector: string) => path.join(dkimDir(), `${domainOf(domain)}.${selectorOf(selector)}.key`);

async function dkimGroupId(): Promise<number> {
  const group = env().mail!.dkimGroup;
  const gid = (await linuxGroupIds()).get(group);
  if (gid === undefined) throw new Error(`no group ${group} for rspamd's DKIM keys (is rspamd installed?)`);
  return gid;
}

const publicKeyOf = (privateKeyPem: string) => createPublicKey(createPrivateKey(privateKeyPem)).export({ type: "spki", format: "der" }).toString("base64");

/**
 * A 2048-bit RSA key for `domain`'s DKIM `selector`, made here and kept here
 * (MAIL_MAPS_DIR/dkim/<domain>.<selector>.key, 0640 root:MAIL_DKIM_GROUP, which rspamd's workers
 * read): only its public key is answered (base64 of its DER SubjectPublicKeyInfo, the `p=` of the
 * zone's TXT record). A key already there is answered again (a retried job makes no second key).
 * It signs nothing until the account's mail names it (applyAccountMail). Null when this machine
 * serves no mail.
 */
export async function makeDkimKey(input: { domain: string; selector: string }): Promise<{ public_key: string | null }> {
  if (!mailServerEnabled()) return { public_key: null };
  const file = dkimKeyPath(input.domain, input.selector);
  const existing = await readIfExists(file);
  if (existing !== null) return { public_key: publicKeyOf(existing) };
  const gid = await dkimGroupId();
  await makeDirectories(env().mail!.mapsDir, 0o755);
  await fs.mkdir(dkimDir(), { recursive: true, mode: 0o750 });
  await fs.chown(dkimDir(), 0, gid);
  await fs.chmod(dkimDir(), 0o750);
  const privateKey = await new Promise<string>((resolve, reject) =>
    generateKeyPair("rsa", { modulusLength: 2048, privateKeyEncoding: { type: "pkcs8", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } }, (error, _publicKey, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
  await writeFilesAtomically([{ path: file, contents: privateKey, mode: 0o640, owner: { uid: 0, gid } }]);
  return { public_key: publicKeyOf(privateKey) };
}

/** Removes the DKIM keys of `domains` but the ones `keep` names (a rotation's old key, a domain gone). */
async function pruneDkimKeys(domains: Iterable<string>, keep: DkimState[]): Promise<void> {
  const names = await fs.readdir(dkimDir()).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [] as string[];
    throw error;
  });
  const kept = new Set(keep.map((key) => `${key.domain}.${key.selector}.key`));
  for (const domain of domains) {
    for (const name of names) {
      if (name.startsWith(`${domain}.`) && DKIM_SELECTOR.test(name.slice(domain.length + 1, -".key".length)) && name.endsWith(".key") && !kept.has(name)) {
        await fs.rm(path.join(dkimDir(), name), { force: true });
      }
    }
  }
}

/** How old a key of a domain no account here has as a mail domain must be before it goes: older than any change still in flight. */
const UNCLAIMED_KEY_AGE_MS = 60 * 60_000;

/**
 * The keys of domains that are no kept account's mail domain here, made over an hour ago: a key
 * made for a new mail domain in a change that then failed (the domain never reached a state here),
 * or left by anything else. A key made a moment ago may be for a change still in its transaction.
 */
async function pruneUnclaimedDkimKeys(): Promise<void> {
  const claimed = new Set<string>();
  for (const state of (await keptStates()).values()) for (const domain of state.mail.domains) claimed.add(domain);
  const names = await fs.readdir(dkimDir()).catch(() => [] as string[]);
  const before = Date.now() - UNCLAIMED_KEY_AGE_MS;
  for (const name of names) {
    const match = /^(.+)\.([^.]+)\.key$/.exec(name);
    if (!match || !DKIM_SELECTOR.test(match[2]) || claimed.has(match[1])) continue;
    const file = path.join(dkimDir(), name);
    const stat = await fs.lstat(file).catch(() => null);
    if (stat?.isFile() && stat.mtimeMs < before) await fs.rm(file, { force: true });
  }
}

/**
 * `postmap` on `table` (the command split on spaces, the table last, after `--`; `-F` first for a
 * table of files whose contents it stores); null when it succeeded.
 */
async function runPostmap(command: string, table: string, fileContents = false): Promise<string | null> {
  const [program, ...args] = command.trim().split(/\s+/);
  const result = await runChild(program, [...args, ...(fileContents ? ["-F"] : []), "--", table], { env: toolEnv(), timeoutMs: 60_000 });
  return result.code === 0 ? null : exitReason(result);
}

/** HOME/mail, the account's own (0700): Dovecot, as the account's user, makes each maildir in it. */
async function prepareMailFolder(username: string, owner: { uid: number; gid: number }): Promise<void> {
  const homes = await openTrustedDirectory(env().homeRoot);
  if (!homes) throw new Error(`no directory ${env().homeRoot} for the homes`);
  try {
    const home = await openDirectoryIn(homes, username);
    if (!home) throw new Error(`no home for ${username}`);
    try {
      await (await makeDirectoryIn(home, "mail", { ...owner, mode: 0o700 }, { repair: true })).close();
    } finally {
      await home.close();
    }
  } finally {
    await homes.close();
  }
}

/**
 * The certificates this machine has for the mail host names of `domains`: CERTS_DIR/mail.<domain>/
 * (AutoSSL's, or one an admin put there), each only when its chain is for that name, not expired,
 * and for the key beside it — a pair Postfix or Dovecot would refuse is left out (logged), so the
 * machine's own certificate answers for that name rather than a failing handshake.
 */
async function mailHostCertificates(domains: string[]): Promise<MailHostCertificate[]> {
  const found: MailHostCertificate[] = [];
  for (const domain of domains) {
    const host = mailHostOf(domainOf(domain));
    const files = certificateFiles(env().certsDir, host);
    const [chain, key] = await Promise.all([readIfExists(files.certificatePath), readIfExists(files.keyPath)]);
    if (chain === null || key === null) continue;
    try {
      const leaf = new X509Certificate(chain);
      if (leaf.checkHost(host) === undefined) throw new Error("it is not for that name");
      if (Date.parse(leaf.validTo) <= Date.now()) throw new Error("it has expired");
      if (!leaf.checkPrivateKey(createPrivateKey(key))) throw new Error("it is not for the key beside it");
      found.push({ host, fingerprint: leaf.fingerprint256 });
    } catch (error) {
      console.error(`[mail] ${host}: its certificate is not served: ${(error as Error).message}`);
    }
  }
  return found;
}

/**
 * A certificate of this machine changed (AutoSSL installed, renewed or removed one: acme.ts
 * localMachine.reload): the mail servers' certificates by name follow.
 */
export async function refreshMailCertificates(): Promise<void> {
  if (!mailServerEnabled()) return;
  await inTurn(() => rebuild(null));
}

/** Whether the account has mail here: a mail domain, mailbox or alias (its HOME/mail, its lines in the tables). */
const hasMail = (mail: AccountMail | null | undefined): mail is AccountMail => Boolean(mail && (mail.domains.length || mail.mailboxes.length || mail.aliases.length));
/** Whether the account sends from here: it has mail, or a site whose PHP sends as its domains. */
const sendsMail = (mail: AccountMail | null | undefined): mail is AccountMail => Boolean(mail?.sendingDomains?.length) || hasMail(mail);

// The domains this machine forwards to a move's target (./forwards.ts), with each forward's end:
// one small file, so a rebuild does not read every site's file to find the few forwards.
const forwardsFile = () => path.join(env().dataDir, "mail-forwards.json");

/** A forward kept here: when it ends, and the target (a bare end: kept by a version before mail was relayed). */
type KeptForward = { until: string; target: string } | string;

async function keptForwards(): Promise<Record<string, KeptForward>> {
  const text = await readIfExists(forwardsFile());
  return text === null ? {} : (JSON.parse(text) as Record<string, KeptForward>);
}

/** The forwarded domains whose forward has not ended. */
async function forwardedDomains(now = Date.now()): Promise<ForwardedDomain[]> {
  return Object.entries(await keptForwards())
    .map(([domain, kept]) => (typeof kept === "string" ? { domain, until: kept, target: null } : { domain, ...kept }))
    .filter((forward) => Date.parse(forward.until) > now)
    .map(({ domain, target }) => ({ domain, target }));
}

/** Keeps `mail` as the account's state here (none: its file goes); the previous text when that changed anything, false when not. */
async function keepState(username: string, suspended: boolean, held: boolean, mail: AccountMail | null | undefined): Promise<string | null | false> {
  const file = accountFile(username);
  const before = await readIfExists(file);
  if (!sendsMail(mail)) {
    if (before === null) return false;
    await fs.rm(file, { force: true });
    return before;
  }
  const contents = JSON.stringify(held ? { suspended, held, mail } : { suspended, mail });
  if (before === contents) return false;
  await fs.mkdir(accountsDir(), { recursive: true, mode: 0o700 });
  await writeAtomically(file, contents, 0o600);
  return before;
}

/** The addresses of `state`'s mailboxes that may log in: enabled, of an account not suspended. */
function loginAddresses(state: { suspended: boolean; mail: AccountMail | null } | null): Set<string> {
  if (!state?.mail || state.suspended) return new Set();
  return new Set(state.mail.mailboxes.filter((mailbox) => mailbox.enabled).map((mailbox) => `${mailbox.localPart}@${mailbox.domain}`));
}

/**
 * Ends the open IMAP and POP3 sessions of `addresses` (MAIL_KICK_COMMAND, each address after
 * `--`): a login taken away — a suspension, a mailbox disabled or removed — also closes what was
 * open. Called once Dovecot sees the new passwd-file, so a client that logs in again is refused.
 * A failure is logged: the logins are refused already, and the change stands.
 */
const DOVEADM_NOT_FOUND = 68;

async function endSessions(addresses: string[]): Promise<void> {
  const command = env().mail!.kickCommand;
  if (!command) return;
  const [program, ...args] = command.split(/\s+/);
  for (const address of addresses) {
    const result = await runChild(program, [...args, "--", address], { env: toolEnv(), timeoutMs: 30_000 });
    if (result.code !== 0 && result.code !== DOVEADM_NOT_FOUND) console.error(`[mail] the sessions of ${address} were not ended: ${exitReason(result)}`);
  }
}

/** Puts back what keepState replaced (`before`: the old text, null when there was none). */
async function restoreState(username: string, before: string | null): Promise<void> {
  if (before === null) await fs.rm(accountFile(username), { force: true });
  else await writeAtomically(accountFile(username), before, 0o600);
}

/**
 * One account's mail made so on this machine (a change, account.ensure): its state kept, its
 * HOME/mail made, the machine's tables rebuilt. A refusal puts the account's previous state back
 * (and its tables stay as they were) and fails the change. `settle_ms`: how long until Dovecot
 * sees the change (markPasswdChanged) — the API waits that long once its transaction has ended,
 * so a login or a delivery right after its answer meets the new file. Logins it takes away (a
 * suspension, a mailbox disabled or removed) end their open sessions too (endSessions), once
 * Dovecot sees the file: then it has waited itself, and `settle_ms` is 0.
 */
export async function applyAccountMail(input: { username: string; suspended: boolean; held?: boolean; mail: AccountMail | null }): Promise<{ settle_ms: number }> {
  if (!mailServerEnabled()) return { settle_ms: 0 };
  const change = await inTurn(async () => {
    if (sendsMail(input.mail)) {
      await assertPanelUser(input.username);
      const user = (await linuxPasswdEntries()).get(input.username)!;
      if (hasMail(input.mail)) await prepareMailFolder(input.username, { uid: user.uid, gid: user.gid });
      await ensurePhpLogin(input.username, { uid: user.uid, gid: user.gid });
    }
    const before = await keepState(input.username, input.suspended, input.held === true, input.mail);
    if (before === false) return null;
    let written: number | null;
    try {
      written = await rebuild(input.username);
    } catch (error) {
      await restoreState(input.username, before);
      throw error;
    }
    // Its keys that sign no more (a rotation's old one, a domain or the account gone): the public
    // key may stay published for a while (the panel's zone), the private one is not needed.
    const previousState = before === null ? null : (JSON.parse(before) as { suspended: boolean; mail: AccountMail });
    const previous = previousState?.mail ?? null;
    await pruneDkimKeys(new Set([...(previous?.domains ?? []), ...(input.mail?.domains ?? [])]), hasMail(input.mail) ? (input.mail.dkim ?? []) : []);
    await pruneUnclaimedDkimKeys();
    const loginsNow = loginAddresses(input);
    return { written, loginsGone: [...loginAddresses(previousState)].filter((address) => !loginsNow.has(address)) };
  });
  if (change === null) return { settle_ms: 0 };
  const settleMs = change.written === null ? 0 : msUntilSeen(change.written);
  if (change.loginsGone.length === 0) return { settle_ms: settleMs };
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  await endSessions(change.loginsGone);
  return { settle_ms: 0 };
}

/** Termination and a move's last step on its source: the account's mail is served here no more (its maildirs go with its home). */
export async function removeAccountMail(input: { username: string }): Promise<void> {
  await applyAccountMail({ username: input.username, suspended: false, mail: null });
  if (!mailServerEnabled()) return;
  // Its PHP login (its line went with the rebuild; HOME/.msmtprc goes with the home) and its counts.
  await fs.rm(phpLoginHashFile(checkedString(RENDERER, "username", input.username, PHP_LOGIN, "a username")), { force: true });
  await forgetSending(input);
}

/**
 * Every account this machine hosts (a reconcile, the panel's start): each state kept as given,
 * the states of accounts not listed removed, the tables rebuilt once. A failure is logged for the
 * account it concerns where it can be, and thrown for the tables.
 */
export async function applyAllMail(accounts: { username: string; suspended: boolean; held?: boolean; mail: AccountMail | null }[]): Promise<void> {
  if (!mailServerEnabled()) return;
  await inTurn(async () => {
    const listed = new Set(accounts.map((account) => account.username));
    // One read of /etc/passwd and /etc/group for all (a machine may host thousands of accounts).
    const [users, marked] = await Promise.all([linuxPasswdEntries(), panelUsernames()]);
    for (const account of accounts) {
      try {
        const user = users.get(account.username);
        // Another's user of that name gets no mail folder; rebuild() serves it nothing.
        if (sendsMail(account.mail) && user && marked.has(account.username)) {
          if (hasMail(account.mail)) await prepareMailFolder(account.username, { uid: user.uid, gid: user.gid });
          await ensurePhpLogin(account.username, { uid: user.uid, gid: user.gid });
        }
        await keepState(account.username, account.suspended, account.held === true, account.mail);
      } catch (error) {
        console.error(`[mail] ${account.username}:`, (error as Error).message);
      }
    }
    for (const username of (await keptStates()).keys()) if (!listed.has(username)) await fs.rm(accountFile(username), { force: true });
    await rebuild(null);
  });
}

/**
 * The forwards of this machine changed (a move's switch made them, or their end came): the mail it
 * defers or relays follows. `added`: domains forwarded to `target` until `until`; `removed`:
 * domains no longer forwarded.
 */
export async function applyForwardedMail(change: { added: string[]; target: string; until: string } | { removed: string[] }): Promise<void> {
  if (!mailServerEnabled()) return;
  await inTurn(async () => {
    const forwards = await keptForwards();
    if ("added" in change) {
      const until = new Date(change.until).toISOString();
      for (const domain of change.added) forwards[domainOf(domain)] = { until, target: change.target };
    }
    if ("removed" in change) for (const domain of change.removed) delete forwards[domain];
    await writeAtomically(forwardsFile(), JSON.stringify(forwards), 0o600);
    await rebuild(null);
  });
}

/** doveadm as configured (MAIL_DOVEADM_COMMAND: its own words, e.g. `-c CONF`), then `args`; its exit and output. */
function doveadm(args: string[]) {
  const [program, ...own] = env().mail!.doveadmCommand.split(/\s+/);
  return runChild(program, [...own, ...args], { env: toolEnv(), timeoutMs: 10 * 60_000 });
}

/** The header `doveadm -f tab quota get` prints before its rows. */
const QUOTA_HEADER = "Quota name\tType\tValue\tLimit\t%";

/**
 * The KiB `doveadm -f tab quota get` says a mailbox holds (its STORAGE row's Value): read as data,
 * strictly — the header exactly, each row five tab-separated fields, one STORAGE row with a whole
 * number. Anything else is an error naming the mailbox, never a guess.
 */
export function parseQuotaGet(address: string, stdout: string): number {
  const lines = stdout.split("\n").filter((line) => line !== "");
  if (lines[0] !== QUOTA_HEADER) throw new Error(`doveadm quota get for ${address} printed no quota table`);
  const storage = lines.slice(1).map((line) => line.split("\t")).filter((fields) => fields.length === 5 && fields[1] === "STORAGE");
  if (storage.length !== 1 || !/^[0-9]{1,15}$/.test(storage[0][2])) throw new Error(`doveadm quota get for ${address} printed no single storage figure`);
  return Number(storage[0][2]);
}

/**
 * The MB each of the account's mailboxes holds, as Dovecot's quota counts it (`doveadm quota get`,
 * the count backend with quota_vsizes: the figure its quota is enforced against, not a walk of the
 * maildir). doveadm reads the mailbox as the account's user (its userdb uid), never as root.
 */
export async function mailboxUsage(input: { username: string; mailboxes: { domain: string; localPart: string }[] }): Promise<{ address: string; mb: number }[]> {
  const usage = input.mailboxes.map((mailbox) => ({ address: `${localPartOf(mailbox.localPart)}@${domainOf(mailbox.domain)}`, mb: 0 }));
  if (!mailServerEnabled()) return usage;
  for (const entry of usage) {
    const result = await doveadm(["-f", "tab", "quota", "get", "-u", entry.address]);
    if (result.code !== 0) throw new Error(`doveadm quota get for ${entry.address} failed: ${exitReason(result)}`);
    entry.mb = parseQuotaGet(entry.address, result.stdout) / 1024;
  }
  return usage;
}

/**
 * After a restore wrote the account's maildirs back (files Dovecot's indexes do not know): each
 * mailbox's folders resynced with what is on disk (`doveadm force-resync`), then its quota counted
 * again from them (`doveadm quota recalc`). A mailbox Dovecot refuses fails the call, naming it.
 */
export async function resyncMailboxes(input: { username: string; mailboxes: { domain: string; localPart: string }[] }): Promise<void> {
  if (!mailServerEnabled()) return;
  for (const mailbox of input.mailboxes) {
    const address = `${localPartOf(mailbox.localPart)}@${domainOf(mailbox.domain)}`;
    for (const args of [["force-resync", "-u", address, "--", "*"], ["quota", "recalc", "-u", address]]) {
      const result = await doveadm(args);
      if (result.code !== 0) throw new Error(`doveadm ${args[0]} for ${address} failed: ${exitReason(result)}`);
    }
  }
}
