import { type ChildProcess, execFileSync, spawn, type SpawnOptions } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { MAIL_HEADER, POSTFIX_TABLES } from "@/lib/provisioning/mail";
import { freePort } from "./server";

// A private Postfix and Dovecot 2.3 for the email tests: own configuration, queue, data and
// runtime directories under `root`, own ports on 127.0.0.1, started as children of the test and
// stopped by stop() — never the machine's services (which stay stopped: .ci/run installs the
// packages only). `env` is what the panel needs to write the mail tables they read. The tables
// start empty with the panel's mark, as the panel's first start leaves them.
//
// Postfix: smtpd on `smtpPort` (inbound, no relay: reject_unauth_destination), virtual mailbox
// domains and maps, virtual alias maps, delivery to Dovecot's LMTP socket. Dovecot: IMAP on
// `imapPort` and POP3 on `pop3Port` (STARTTLS offered; a login without TLS only from this machine,
// as Dovecot allows on loopback), IMAPS on `imapsPort` and POP3S on `pop3sPort` (implicit TLS),
// LMTP for Postfix, passdb and userdb from the panel's passwd-file. TLS with the machine's
// certificate (`tlsCert`, made here for mail.panel-test.invalid), and a mail domain's own by
// SNI from the panel's `sni` table (Postfix) and `dovecot-sni.conf` (Dovecot), as docs/email.md
// "TLS" configures the machine. Quota (docs/email.md "Quota"): Dovecot's quota
// plugin with the count backend, and its quota-status service as Postfix's policy check at RCPT,
// configured as that page tells the admin (DOVECOT_QUOTA); `env.MAIL_DOVEADM_COMMAND` reaches it.
//
// On a test node (`machine`: tests/support/node-host.ts) they run inside its namespaces, on the
// standard ports (25, 587, 465, 143, 110, 993, 995: a source relays to its target's 25) and on
// the node's address beside 127.0.0.1, with a host name of their own: Postfix refuses to relay
// to a server that greets with its own name.
//
// Sending (docs/email.md "Sending"): submission on `submissionPort` (STARTTLS) and `smtpsPort`
// (implicit TLS), both only with SASL authentication through Dovecot's auth socket and only as an
// address the login owns (smtpd_sender_login_maps, the panel's sender_logins table); a certificate
// made here for the machine's mail host name. What is submitted passes rspamd (its own instance:
// own configuration, database and run directories, the proxy worker as a milter on
// `rspamdPort`), which signs it with the domain's DKIM key from the panel's selector map.

/** A test node the servers run on, instead of this machine. */
export interface MailMachine {
  /** Its address, where the tests and the other nodes reach its servers. */
  address: string;
  /** Its mail host name: its certificate's, its Postfix's greeting. */
  hostName: string;
  start(program: string, args: string[], options?: SpawnOptions): ChildProcess;
  run(program: string, args: string[]): { code: number; stdout: string; stderr: string };
}

export interface MailServers {
  smtpPort: number;
  submissionPort: number;
  smtpsPort: number;
  imapPort: number;
  pop3Port: number;
  imapsPort: number;
  pop3sPort: number;
  /** Where the services listen (127.0.0.1, or a node's address). */
  address: string;
  /** The machine's own certificate (self-signed, CN its mail host name): what a name without a certificate of its own gets. */
  tlsCert: string;
  env: Record<string, string>;
  /** Postfix's config_directory (`sendmail -C` takes it). */
  postfixConfigDir: string;
  /** Postfix's and Dovecot's logs, for a failing test's message. */
  logs(): string;
  stop(): Promise<void>;
}

const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "");

/** Whether something accepts connections on 127.0.0.1:`port` of this machine. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Whether something accepts connections on 127.0.0.1:`port` of a test node (bash's /dev/tcp, inside it). */
const listeningOn = (machine: MailMachine) => async (port: number) => machine.run("bash", ["-c", `exec 3<>/dev/tcp/127.0.0.1/${port}`]).code === 0;

/** Resolves once `isListening(port)`; rejects after 60 s (Postfix starts in 20–40 s on a loaded 2-core machine) or when `child` exits. */
async function waitForPort(port: number, child: ChildProcess, output: () => string, isListening: (port: number) => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const started = Date.now();
  while (!(await isListening(port))) {
    if (child.exitCode !== null || Date.now() - started > timeoutMs) throw new Error(`did not start on ${port}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

const MASTER_SERVICES = `pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
`;

/**
 * A submission service of master.cf on `address`: TLS first (STARTTLS, or `implicit` from the
 * connection's start), SASL authentication required, the sender one the login owns, rspamd as its
 * milter. Docs/email.md "Sending" has the machine's copy.
 */
function submissionService(address: string, implicit: boolean, rspamdPort: number, policySocket: string): string {
  return [
    `${address} inet n - n - - smtpd`,
    `  -o syslog_name=postfix/${implicit ? "smtps" : "submission"}`,
    ...(implicit ? ["  -o smtpd_tls_wrappermode=yes"] : []),
    "  -o smtpd_tls_security_level=encrypt",
    "  -o smtpd_sasl_auth_enable=yes",
    "  -o smtpd_tls_auth_only=yes",
    "  -o smtpd_client_restrictions=permit_sasl_authenticated,reject",
    "  -o smtpd_sender_restrictions=reject_sender_login_mismatch",
    "  -o smtpd_relay_restrictions=permit_sasl_authenticated,reject",
    // The sending limits (docs/email.md "Sending limits"): the panel's policy service, at DATA.
    `  -o smtpd_data_restrictions=check_policy_service,unix:${policySocket}`,
    `  -o smtpd_milters=inet:127.0.0.1:${rspamdPort}`,
    "",
  ].join("\n");
}

/**
 * rspamd's configuration: Debian's (CONFDIR=/etc/rspamd) with the proxy worker alone, as a milter
 * on `port` that scans in its own process; LOCAL_CONFDIR's local.d holds what docs/email.md tells
 * the admin to install (dkim_signing.conf, options.inc), and, for tests only, a short public
 * suffix list (rspamd compiles Debian's 9,600 suffixes at every start: a minute on a loaded
 * 2-core machine).
 */
function writeRspamdConfig(dirs: { rspamd: string }, mapsDir: string, port: number): string {
  const local = path.join(dirs.rspamd, "local.d");
  fs.mkdirSync(local, { recursive: true });
  const suffixes = path.join(dirs.rspamd, "effective_tld_names.dat");
  fs.writeFileSync(suffixes, "com\nnet\norg\nexample\ninvalid\ntest\n");
  fs.writeFileSync(path.join(local, "dkim_signing.conf"), rspamdDkimSigning(mapsDir));
  fs.writeFileSync(path.join(local, "actions.conf"), RSPAMD_ACTIONS);
  fs.writeFileSync(path.join(local, "milter_headers.conf"), RSPAMD_MILTER_HEADERS);
  // Tests only: rspamd's test patterns for every action (GTUBE's variants: add header, rewrite
  // subject), not only reject's, so a test reaches each action without real spam.
  fs.writeFileSync(path.join(local, "options.inc"), `${RSPAMD_OPTIONS}url_tld = "${suffixes}";\nenable_test_patterns = true;\n`);
  const conf = path.join(dirs.rspamd, "rspamd.conf");
  fs.writeFileSync(
    conf,
    `.include "$CONFDIR/common.conf"
options {
  pidfile = "$RUNDIR/rspamd.pid";
  .include "$CONFDIR/options.inc"
  .include(try=true; priority=1,duplicate=merge) "$LOCAL_CONFDIR/local.d/options.inc"
}
logging {
  type = "file";
  filename = "$LOGDIR/rspamd.log";
  level = "info";
}
worker "rspamd_proxy" {
  bind_socket = "127.0.0.1:${port}";
  milter = yes;
  timeout = 120s;
  count = 1;
  upstream "local" {
    default = yes;
    self_scan = yes;
  }
}
`,
  );
  return conf;
}

/** local.d/dkim_signing.conf (docs/email.md "DKIM"): sign authenticated senders' mail with the panel's keys. */
export const rspamdDkimSigning = (mapsDir: string) => `# The hosting panel's DKIM keys (docs/email.md "DKIM").
enabled = true;
sign_authenticated = true;
sign_local = false;
sign_inbound = false;
use_domain = "header";
use_esld = false;
allow_hdrfrom_mismatch = false;
# The login may be an account's PHP login (no domain in it): Postfix already refused an envelope
# the login's account does not own, and the From header must be the envelope's domain (above), so
# what is signed is the account's own. An empty envelope is never signed (no owner to check).
allow_username_mismatch = true;
allow_envfrom_empty = false;
try_fallback = false;
selector_map = "${mapsDir}/dkim_selectors";
path = "${mapsDir}/dkim/$domain.$selector.key";
`;

/**
 * local.d/actions.conf (docs/email.md "Spam"): Debian's thresholds (reject at 15, a header at 6)
 * without greylisting, which needs Redis.
 */
const RSPAMD_ACTIONS = `# The hosting panel's spam actions (docs/email.md "Spam"): no greylisting (it needs Redis).
greylist = null;
`;

/**
 * local.d/milter_headers.conf: every message scanned on its way in says its score
 * (X-Spam-Status), mail from this machine's own addresses included — a site's script is not
 * trusted for being local. Authenticated (submitted) mail is not stamped.
 */
const RSPAMD_MILTER_HEADERS = `# The hosting panel's spam headers (docs/email.md "Spam").
use = ["x-spam-status"];
skip_local = false;
skip_authenticated = true;
`;

/** local.d/options.inc: the selector map is looked at every second (a tenth of the interval), not every 30 s. */
const RSPAMD_OPTIONS = "map_watch_interval = 10s;\n";

/**
 * Dovecot's quota (docs/email.md "Quota"): the count backend (Dovecot's own index of each
 * mailbox's messages and their sizes, no walk of the maildir), each mailbox's limit from the
 * passwd-file's userdb_quota_rule, LMTP refusing at RCPT a mailbox that is full, and quota-status
 * answering Postfix's policy check with 552 5.2.2.
 */
export const DOVECOT_QUOTA = `mail_plugins = $mail_plugins quota
protocol imap {
  mail_plugins = $mail_plugins imap_quota
}
lmtp_rcpt_check_quota = yes
plugin {
  quota = count:User quota
  quota_vsizes = yes
  quota_status_success = DUNNO
  quota_status_nouser = DUNNO
  quota_status_overquota = "552 5.2.2 Mailbox is full"
}`;

/** `root` must be a directory Postfix's and Dovecot's users can pass through (0755 up to /). */
/** The ports a node's servers take: its own, as on a real machine. */
const STANDARD_PORTS = [25, 587, 465, 143, 110, 993, 995, 11332, 12340];

/**
 * `machine`: a test node to run on (default: this machine). `rspamdModulesOff`: rspamd modules
 * turned off (local.d/<module>.conf `enabled = false`) — the mail bench measures with and without
 * the DNS blocklists, which wait out rspamd's DNS timeout where no resolver answers them.
 */
export async function startMailServers(root: string, options: { machine?: MailMachine; rspamdModulesOff?: string[] } = {}): Promise<MailServers> {
  const { machine } = options;
  const ports = machine ? STANDARD_PORTS : await Promise.all(STANDARD_PORTS.map(() => freePort()));
  const [smtpPort, submissionPort, smtpsPort, imapPort, pop3Port, imapsPort, pop3sPort, rspamdPort, quotaStatusPort] = ports;
  const address = machine?.address ?? "127.0.0.1";
  const hostName = machine?.hostName ?? "mail.panel-test.invalid";
  // Postfix's and Dovecot's listeners: 127.0.0.1, and a node's address.
  const interfaces = machine ? `127.0.0.1, ${machine.address}` : "127.0.0.1";
  const listenOn = (port: number) => (machine ? String(port) : `127.0.0.1:${port}`);
  const dirs = {
    postfix: path.join(root, "postfix"),
    queue: path.join(root, "postfix-queue"),
    data: path.join(root, "postfix-data"),
    maps: path.join(root, "mail-maps"),
    dovecotRun: path.join(root, "dovecot-run"),
    dovecotState: path.join(root, "dovecot-state"),
    rspamd: path.join(root, "rspamd"),
    rspamdDb: path.join(root, "rspamd-db"),
    rspamdRun: path.join(root, "rspamd-run"),
    policy: path.join(root, "policy"),
  };
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  fs.chmodSync(dirs.maps, 0o755);
  execFileSync("chown", ["postfix", dirs.data]);
  execFileSync("chown", ["_rspamd:_rspamd", dirs.rspamdDb, dirs.rspamdRun]);
  // The panel's policy socket: Postfix's (and root's) alone, as /var/spool/postfix/private is.
  execFileSync("chown", ["root:postfix", dirs.policy]);
  fs.chmodSync(dirs.policy, 0o750);
  const policySocket = path.join(dirs.policy, "hosting-panel-policy");
  // The machine's certificate for its mail host name (self-signed here: swaks does not verify).
  const tlsKey = path.join(root, "mail-key.pem");
  const tlsCert = path.join(root, "mail-cert.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", `/CN=${hostName}`, "-keyout", tlsKey, "-out", tlsCert], { stdio: "ignore" });
  const authSocket = path.join(dirs.dovecotRun, "auth-postfix");
  const maillog = path.join(root, "postfix.log");
  const dovecotLog = path.join(root, "dovecot.log");
  const lmtpSocket = path.join(dirs.dovecotRun, "lmtp");
  const map = (name: string) => `hash:${path.join(dirs.maps, name)}`;
  fs.writeFileSync(
    path.join(dirs.postfix, "main.cf"),
    [
      "compatibility_level = 3.6",
      `queue_directory = ${dirs.queue}`,
      `data_directory = ${dirs.data}`,
      "mail_owner = postfix",
      `inet_interfaces = ${interfaces}`,
      "inet_protocols = ipv4",
      `myhostname = ${hostName}`,
      "mydestination =",
      "mynetworks = 127.0.0.1/32",
      "local_recipient_maps =",
      "alias_maps =",
      "alias_database =",
      // A domain moving away (the panel's moving_domains): 450, the sender tries again later —
      // before the relay check (a domain whose mail left this machine is no longer local here),
      // and first in the recipient checks (below), which the submission services keep.
      `smtpd_relay_restrictions = check_recipient_access ${map("moving_domains")}, reject_unauth_destination`,
      // A moved account's domains while its forward lasts: relayed to the move's target.
      `relay_domains = ${map("relay_domains")}`,
      `transport_maps = ${map("transport")}`,
      `virtual_mailbox_domains = ${map("virtual_domains")}`,
      `virtual_mailbox_maps = ${map("virtual_mailboxes")}`,
      `virtual_alias_maps = ${map("virtual_aliases")}`,
      `virtual_transport = lmtp:unix:${lmtpSocket}`,
      `smtpd_sender_login_maps = ${map("sender_logins")}`,
      // Quota (docs/email.md "Quota"): Dovecot's quota-status answers at RCPT for the size the
      // client declared (SIZE=, as MTAs do). Dovecot 2.3's answers at RCPT only ("service can
      // only be used for recipient restrictions" at END-OF-MESSAGE).
      `smtpd_recipient_restrictions = check_recipient_access ${map("moving_domains")}, check_policy_service inet:127.0.0.1:${quotaStatusPort}`,
      "smtpd_sasl_type = dovecot",
      `smtpd_sasl_path = ${authSocket}`,
      `smtpd_tls_chain_files = ${tlsKey}, ${tlsCert}`,
      "smtpd_tls_security_level = may",
      // A mail domain's certificate by the name the client asks for (the panel's table, postmap -F).
      `tls_server_sni_maps = ${map("sni")}`,
      // rspamd signs what is submitted (the submission services below name it again) and scores
      // what comes in; nothing passes while it does not answer: mail waits in the sender's queue
      // rather than leaving unsigned or unscanned.
      "milter_default_action = tempfail",
      // Incoming mail on port 25 is scored by rspamd too (docs/email.md "Spam"): over its reject
      // threshold refused at DATA, over its header threshold delivered marked.
      `smtpd_milters = inet:127.0.0.1:${rspamdPort}`,
      "milter_protocol = 6",
      `maillog_file_prefixes = ${root}`,
      `maillog_file = ${maillog}`,
      "smtputf8_enable = no",
      // Only root and Postfix may use sendmail (docs/email.md "Configuration"): a customer's
      // process sends through the submission service with its own login, counted.
      "authorized_submit_users = root, postfix",
      "biff = no",
      "",
    ].join("\n"),
  );
  fs.writeFileSync(
    path.join(dirs.postfix, "master.cf"),
    `${listenOn(smtpPort)} inet n - n - - smtpd\n${submissionService(listenOn(submissionPort), false, rspamdPort, policySocket)}${submissionService(listenOn(smtpsPort), true, rspamdPort, policySocket)}${MASTER_SERVICES}`,
  );
  const postmap = ["postmap", "-c", dirs.postfix];
  for (const name of POSTFIX_TABLES) {
    fs.writeFileSync(path.join(dirs.maps, name), `${MAIL_HEADER}\n`, { mode: 0o640 });
    // Inside a node: postmap checks main.cf's inet_interfaces against the machine's own.
    if (machine) {
      const made = machine.run(postmap[0], [...postmap.slice(1), "--", map(name)]);
      if (made.code !== 0) throw new Error(`postmap ${name}: ${made.stderr}`);
    } else execFileSync(postmap[0], [...postmap.slice(1), "--", map(name)]);
  }
  const passwd = path.join(dirs.maps, "passwd");
  fs.writeFileSync(passwd, `${MAIL_HEADER}\n`, { mode: 0o640 });
  execFileSync("chown", ["root:dovecot", passwd]);
  const selectors = path.join(dirs.maps, "dkim_selectors");
  fs.writeFileSync(selectors, `${MAIL_HEADER}\n`, { mode: 0o640 });
  execFileSync("chown", ["root:_rspamd", selectors]);
  const dovecotConf = path.join(root, "dovecot.conf");
  fs.writeFileSync(
    dovecotConf,
    `base_dir = ${dirs.dovecotRun}
state_dir = ${dirs.dovecotState}
instance_name = ${path.basename(root)}
protocols = imap pop3 lmtp
listen = ${interfaces}
ssl = required
ssl_cert = <${tlsCert}
ssl_key = <${tlsKey}
auth_mechanisms = plain login
log_path = ${dovecotLog}
mail_location = maildir:~
first_valid_uid = 1000
${DOVECOT_QUOTA}
service quota-status {
  executable = quota-status -p postfix
  inet_listener quota-status {
    address = 127.0.0.1
    port = ${quotaStatusPort}
  }
  client_limit = 1
}
passdb {
  driver = passwd-file
  args = ${passwd}
}
userdb {
  driver = passwd-file
  args = ${passwd}
}
service imap-login {
  inet_listener imap {
    address = ${interfaces}
    port = ${imapPort}
  }
  inet_listener imaps {
    address = ${interfaces}
    port = ${imapsPort}
    ssl = yes
  }
}
service pop3-login {
  inet_listener pop3 {
    address = ${interfaces}
    port = ${pop3Port}
  }
  inet_listener pop3s {
    address = ${interfaces}
    port = ${pop3sPort}
    ssl = yes
  }
}
service auth {
  unix_listener auth-postfix {
    mode = 0660
    user = postfix
    group = postfix
  }
}
service lmtp {
  unix_listener lmtp {
    mode = 0600
    user = postfix
    group = postfix
  }
}
# The mail domains' certificates by name (local_name blocks), written by the panel.
!include_try ${path.join(dirs.maps, "dovecot-sni.conf")}
`,
  );
  let output = "";
  const start = (program: string, args: string[]) => {
    const child = (machine?.start ?? spawn)(program, args, { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    child.on("error", (error) => (output += `${error}\n`));
    return child;
  };
  const logs = () => `${output}\n--- postfix\n${read(maillog)}\n--- dovecot\n${read(dovecotLog)}\n--- rspamd\n${read(rspamdLog).split("\n").slice(-60).join("\n")}`;
  // start-fg: Postfix's master stays the test's child (stop() ends it like any other).
  const rspamdConf = writeRspamdConfig(dirs, dirs.maps, rspamdPort);
  for (const module of options.rspamdModulesOff ?? []) fs.writeFileSync(path.join(dirs.rspamd, "local.d", `${module}.conf`), "enabled = false;\n");
  const rspamdLog = path.join(dirs.rspamdRun, "rspamd.log");
  const postfix = start("postfix", ["-c", dirs.postfix, "start-fg"]);
  const dovecot = start("dovecot", ["-F", "-c", dovecotConf]);
  const rspamd = start("rspamd", [
    "-f",
    "-c",
    rspamdConf,
    "-u",
    "_rspamd",
    "-g",
    "_rspamd",
    "--var",
    "CONFDIR=/etc/rspamd",
    "--var",
    `LOCAL_CONFDIR=${dirs.rspamd}`,
    "--var",
    `DBDIR=${dirs.rspamdDb}`,
    "--var",
    `RUNDIR=${dirs.rspamdRun}`,
    "--var",
    `LOGDIR=${dirs.rspamdRun}`,
  ]);
  const stop = async () => {
    // `postfix stop` ends the master the way Postfix does (its children, its pid file); the
    // child's own end is waited for, and forced past 10 s.
    if (machine) machine.run("postfix", ["-c", dirs.postfix, "stop"]);
    else {
      try {
        execFileSync("postfix", ["-c", dirs.postfix, "stop"], { stdio: "ignore", timeout: 20_000 });
      } catch {
        // not running (any more)
      }
    }
    await Promise.all([stopChild(postfix), stopChild(dovecot), stopChild(rspamd)]);
  };
  const isListening = machine ? listeningOn(machine) : listening;
  try {
    await Promise.all([
      waitForPort(smtpPort, postfix, logs, isListening),
      waitForPort(submissionPort, postfix, logs, isListening),
      waitForPort(smtpsPort, postfix, logs, isListening),
      waitForPort(imapPort, dovecot, logs, isListening),
      waitForPort(pop3Port, dovecot, logs, isListening),
      waitForPort(imapsPort, dovecot, logs, isListening),
      waitForPort(pop3sPort, dovecot, logs, isListening),
      waitForPort(quotaStatusPort, dovecot, logs, isListening),
      waitForPort(rspamdPort, rspamd, logs, isListening, 120_000),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    smtpPort,
    submissionPort,
    smtpsPort,
    imapPort,
    pop3Port,
    imapsPort,
    pop3sPort,
    address,
    tlsCert,
    env: {
      MAIL_SERVER: "1",
      MAIL_MAPS_DIR: dirs.maps,
      MAIL_POSTMAP_COMMAND: postmap.join(" "),
      MAIL_RELOAD_COMMAND: `postfix -c ${dirs.postfix} reload`,
      MAIL_KICK_COMMAND: `doveadm -c ${dovecotConf} kick`,
      MAIL_DOVEADM_COMMAND: `doveadm -c ${dovecotConf}`,
      MAIL_DOVECOT_GROUP: "dovecot",
      MAIL_POLICY_SOCKET: policySocket,
      MAIL_SUBMISSION_PORT: String(submissionPort),
      MAIL_SMTP_PORT: String(smtpPort),
    },
    postfixConfigDir: dirs.postfix,
    logs,
    stop,
  };
}
