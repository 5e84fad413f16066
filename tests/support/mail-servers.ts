import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { MAIL_HEADER } from "@/lib/provisioning/mail";
import { freePort } from "./server";

// A private Postfix and Dovecot 2.3 for the email tests: own configuration, queue, data and
// runtime directories under `root`, own ports on 127.0.0.1, started as children of the test and
// stopped by stop() — never the machine's services (which stay stopped: .ci/run installs the
// packages only). `env` is what the panel needs to write the mail tables they read. The tables
// start empty with the panel's mark, as the panel's first start leaves them.
//
// Postfix: smtpd on `smtpPort` (inbound, no relay: reject_unauth_destination), virtual mailbox
// domains and maps, virtual alias maps, delivery to Dovecot's LMTP socket. Dovecot: IMAP on
// `imapPort`, POP3 on `pop3Port` (plain text on loopback: TLS is the next slice), LMTP for Postfix,
// passdb and userdb from the panel's passwd-file.

export interface MailServers {
  smtpPort: number;
  imapPort: number;
  pop3Port: number;
  env: Record<string, string>;
  /** Postfix's and Dovecot's logs, for a failing test's message. */
  logs(): string;
  stop(): Promise<void>;
}

const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "");

/** Resolves once something accepts connections on 127.0.0.1:`port`; rejects after 20 s or when `child` exits. */
function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const attempt = () => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve();
      });
      socket.once("error", () => {
        socket.destroy();
        if (child.exitCode !== null || Date.now() - started > 20_000) return reject(new Error(`did not start on ${port}:\n${output()}`));
        setTimeout(attempt, 100);
      });
    };
    attempt();
  });
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
`;

/** `root` must be a directory Postfix's and Dovecot's users can pass through (0755 up to /). */
export async function startMailServers(root: string): Promise<MailServers> {
  const [smtpPort, imapPort, pop3Port] = [await freePort(), await freePort(), await freePort()];
  const dirs = {
    postfix: path.join(root, "postfix"),
    queue: path.join(root, "postfix-queue"),
    data: path.join(root, "postfix-data"),
    maps: path.join(root, "mail-maps"),
    dovecotRun: path.join(root, "dovecot-run"),
    dovecotState: path.join(root, "dovecot-state"),
  };
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  fs.chmodSync(dirs.maps, 0o755);
  execFileSync("chown", ["postfix", dirs.data]);
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
      "inet_interfaces = 127.0.0.1",
      "inet_protocols = ipv4",
      "myhostname = mail.panel-test.invalid",
      "mydestination =",
      "mynetworks = 127.0.0.1/32",
      "local_recipient_maps =",
      "alias_maps =",
      "alias_database =",
      "smtpd_relay_restrictions = reject_unauth_destination",
      `virtual_mailbox_domains = ${map("virtual_domains")}`,
      `virtual_mailbox_maps = ${map("virtual_mailboxes")}`,
      `virtual_alias_maps = ${map("virtual_aliases")}`,
      `virtual_transport = lmtp:unix:${lmtpSocket}`,
      `maillog_file_prefixes = ${root}`,
      `maillog_file = ${maillog}`,
      "smtputf8_enable = no",
      "biff = no",
      "",
    ].join("\n"),
  );
  fs.writeFileSync(path.join(dirs.postfix, "master.cf"), `127.0.0.1:${smtpPort} inet n - n - - smtpd\n${MASTER_SERVICES}`);
  const postmap = ["postmap", "-c", dirs.postfix];
  for (const name of ["virtual_domains", "virtual_mailboxes", "virtual_aliases"]) {
    fs.writeFileSync(path.join(dirs.maps, name), `${MAIL_HEADER}\n`, { mode: 0o640 });
    execFileSync(postmap[0], [...postmap.slice(1), "--", map(name)]);
  }
  const passwd = path.join(dirs.maps, "passwd");
  fs.writeFileSync(passwd, `${MAIL_HEADER}\n`, { mode: 0o640 });
  execFileSync("chown", ["root:dovecot", passwd]);
  const dovecotConf = path.join(root, "dovecot.conf");
  fs.writeFileSync(
    dovecotConf,
    `base_dir = ${dirs.dovecotRun}
state_dir = ${dirs.dovecotState}
instance_name = ${path.basename(root)}
protocols = imap pop3 lmtp
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
log_path = ${dovecotLog}
mail_location = maildir:~
first_valid_uid = 1000
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
    address = 127.0.0.1
    port = ${imapPort}
  }
  inet_listener imaps {
    port = 0
  }
}
service pop3-login {
  inet_listener pop3 {
    address = 127.0.0.1
    port = ${pop3Port}
  }
  inet_listener pop3s {
    port = 0
  }
}
service lmtp {
  unix_listener lmtp {
    mode = 0600
    user = postfix
    group = postfix
  }
}
`,
  );
  let output = "";
  const start = (program: string, args: string[]) => {
    const child = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout!.on("data", (chunk) => (output += chunk));
    child.stderr!.on("data", (chunk) => (output += chunk));
    child.on("error", (error) => (output += `${error}\n`));
    return child;
  };
  const logs = () => `${output}\n--- postfix\n${read(maillog)}\n--- dovecot\n${read(dovecotLog)}`;
  // start-fg: Postfix's master stays the test's child (stop() ends it like any other).
  const postfix = start("postfix", ["-c", dirs.postfix, "start-fg"]);
  const dovecot = start("dovecot", ["-F", "-c", dovecotConf]);
  const stop = async () => {
    // `postfix stop` ends the master the way Postfix does (its children, its pid file); the
    // child's own end is waited for, and forced past 10 s.
    try {
      execFileSync("postfix", ["-c", dirs.postfix, "stop"], { stdio: "ignore", timeout: 20_000 });
    } catch {
      // not running (any more)
    }
    await Promise.all([stopChild(postfix), stopChild(dovecot)]);
  };
  try {
    await Promise.all([waitForPort(smtpPort, postfix, logs), waitForPort(imapPort, dovecot, logs), waitForPort(pop3Port, dovecot, logs)]);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    smtpPort,
    imapPort,
    pop3Port,
    env: {
      MAIL_SERVER: "1",
      MAIL_MAPS_DIR: dirs.maps,
      MAIL_POSTMAP_COMMAND: postmap.join(" "),
      MAIL_RELOAD_COMMAND: `postfix -c ${dirs.postfix} reload`,
      MAIL_DOVECOT_GROUP: "dovecot",
    },
    logs,
    stop,
  };
}
