import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { mailboxPasswordHash, sha512Crypt } from "@/lib/provisioning/mail-password";
import { parseQuotaGet, type RenderedAccount, renderMailTables } from "@/lib/provisioning/mail";

// Mailbox password hashes (lib/provisioning/mail-password.ts) against crypt(3)'s own results and Dovecot's
// verifier, and the mail tables' renderer (lib/provisioning/mail.ts): what it writes, and its
// refusal of every value no request schema would let through (a row written by hand, an older
// version's) before it becomes a line of a Postfix table or of Dovecot's passwd-file.

process.env.HOME_ROOT = "/srv/homes";
process.env.CERTS_DIR = "/srv/certs";

test("SHA512-CRYPT: Drepper's test vectors and openssl's $6$", () => {
  // From https://www.akkadia.org/drepper/SHA-crypt.txt (rounds written out, as the panel writes them).
  assert.equal(
    sha512Crypt("Hello world!", "saltstring", 5000),
    "$6$rounds=5000$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1",
  );
  assert.equal(
    sha512Crypt("Hello world!", "saltstringsaltst", 10000),
    "$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.",
  );
  for (const password of ["short", "pässwörd with ü", "x".repeat(100)]) {
    const openssl = execFileSync("openssl", ["passwd", "-6", "-salt", "abcdefgh12345678", "--", password], { encoding: "utf8" }).trim();
    assert.equal(sha512Crypt(password, "abcdefgh12345678", 5000).replace("rounds=5000$", ""), openssl, password);
  }
});

test("a stored hash is {SHA512-CRYPT} with a fresh salt, and Dovecot verifies it (doveadm pw -t)", () => {
  const [first, second] = [mailboxPasswordHash("a mailbox password"), mailboxPasswordHash("a mailbox password")];
  assert.match(first, /^\{SHA512-CRYPT\}\$6\$rounds=5000\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}$/);
  assert.notEqual(first, second);
  execFileSync("doveadm", ["pw", "-t", first, "-p", "a mailbox password"], { stdio: "pipe" });
  assert.throws(() => execFileSync("doveadm", ["pw", "-t", first, "-p", "another password"], { stdio: "pipe" }));
});

const HASH = mailboxPasswordHash("a mailbox password");

const account = (overrides: Partial<RenderedAccount> = {}, mail: Partial<RenderedAccount["mail"]> = {}): RenderedAccount => ({
  username: "alice",
  uid: 1001,
  gid: 1001,
  suspended: false,
  ...overrides,
  mail: {
    domains: ["alice.example"],
    mailboxes: [{ localPart: "info", domain: "alice.example", passwordHash: HASH, quotaMb: 100, enabled: true }],
    aliases: [
      { localPart: "sales", domain: "alice.example", targets: ["info@alice.example", "someone+tag@elsewhere.example"] },
      { localPart: "", domain: "alice.example", targets: ["info@alice.example"] },
    ],
    dkim: [{ domain: "alice.example", selector: "s20261128a1b2c3d4" }],
    ...mail,
  },
});

test("the tables: domains, mailboxes, aliases with each mailbox to itself and the catch-all, the passwd-file's line", () => {
  const tables = renderMailTables([account(), account({ username: "bob", uid: 1002, gid: 1003, suspended: true }, { domains: ["bob.example"], mailboxes: [{ localPart: "me", domain: "bob.example", passwordHash: HASH, quotaMb: 5, enabled: true }], aliases: [], dkim: [] })]);
  const header = "# Written by the hosting panel from its records; edit through the panel.\n";
  assert.equal(tables.virtual_domains, `${header}alice.example OK\nbob.example OK\n`);
  assert.equal(tables.virtual_mailboxes, `${header}info@alice.example OK\nme@bob.example OK\n`);
  assert.equal(
    tables.virtual_aliases,
    `${header}@alice.example info@alice.example\ninfo@alice.example info@alice.example\nme@bob.example me@bob.example\nsales@alice.example info@alice.example,someone+tag@elsewhere.example\n`,
  );
  assert.equal(
    tables.passwd,
    `${header}info@alice.example:${HASH}:1001:1001::/srv/homes/alice/mail/alice.example/info::userdb_quota_rule=*:storage=100M\n` +
      `me@bob.example:${HASH}:1002:1003::/srv/homes/bob/mail/bob.example/me::userdb_quota_rule=*:storage=5M nologin=y\n`,
  );
  // Who may send as each domain: the account's mailboxes (smtpd_sender_login_maps); the key each domain signs with (rspamd).
  assert.equal(tables.sender_logins, `${header}@alice.example info@alice.example\n@bob.example me@bob.example\n`);
  assert.equal(tables.dkim_selectors, `${header}alice.example s20261128a1b2c3d4\n`);
  const disabled = renderMailTables([account({}, { mailboxes: [{ localPart: "info", domain: "alice.example", passwordHash: HASH, quotaMb: 100, enabled: false }] })]);
  assert.match(disabled.passwd, / nologin=y\n$/);
  assert.equal(renderMailTables([]).passwd, header);
});

test("an account's other domains: its PHP login alone may send as them (no mailbox, nothing delivered); another's domain, or a hostile name, refused", () => {
  const header = "# Written by the hosting panel from its records; edit through the panel.\n";
  const siteOnly = account({ username: "carol", uid: 1003, gid: 1003, phpLoginHash: HASH }, { domains: [], mailboxes: [], aliases: [], dkim: [], sendingDomains: ["carol.example", "shop.example"] });
  const tables = renderMailTables([account({ phpLoginHash: HASH }, { sendingDomains: ["alice.example", "alice-blog.example"] }), siteOnly]);
  assert.equal(tables.sender_logins, `${header}@alice-blog.example alice\n@alice.example info@alice.example,alice\n@carol.example carol\n@shop.example carol\n`);
  assert.equal(tables.virtual_domains, `${header}alice.example OK\n`, "nothing is delivered for a domain that only sends");
  assert.match(tables.passwd, /^carol:\{SHA512-CRYPT\}/m);
  // Without its PHP login here (not made yet) it sends as none of them.
  assert.equal(renderMailTables([{ ...siteOnly, phpLoginHash: null }]).sender_logins, header);
  assert.throws(() => renderMailTables([account(), { ...siteOnly, mail: { ...siteOnly.mail, sendingDomains: ["alice.example"] } }]), /claimed by alice and carol/);
  assert.throws(() => renderMailTables([siteOnly, { ...siteOnly, username: "dave", uid: 1004, gid: 1004 }]), /claimed by carol and dave/);
  assertRefused(() => renderMailTables([{ ...siteOnly, mail: { ...siteOnly.mail, sendingDomains: ["shop.example\n@alice.example carol"] } }]), "mail domain");
});

/** Characters that end a field or a line, or mean something to Postfix or Dovecot. */
const HOSTILE = ["\n", "\r", "\0", ":", " ", "\t", ",", "#", "=", "+", "@", "%", "!", "/", "..", '"', "'", "$", "\\", "A"];

function assertRefused(render: () => unknown, kind: string) {
  assert.throws(render, (error: Error) => error.constructor === Error && error.message.startsWith("mail tables: refused the ") && error.message.includes(kind), kind);
}

test("every value is checked again: hostile local parts, domains, targets, hashes, ids are refused, nothing rendered", () => {
  for (const bad of HOSTILE) {
    const localPart = `in${bad}fo`;
    assertRefused(() => renderMailTables([account({}, { mailboxes: [{ localPart, domain: "alice.example", passwordHash: HASH, quotaMb: 1, enabled: true }] })]), "local part");
    assertRefused(() => renderMailTables([account({}, { aliases: [{ localPart, domain: "alice.example", targets: ["a@b.example"] }] })]), "local part");
    if (!["+", "=", "A"].includes(bad)) {
      assertRefused(() => renderMailTables([account({}, { aliases: [{ localPart: "x", domain: "alice.example", targets: [`a${bad}b@elsewhere.example`] }] })]), "alias target");
    }
    assertRefused(() => renderMailTables([account({}, { domains: [`ali${bad}ce.example`], mailboxes: [], aliases: [] })]), "mail domain");
  }
  const broken = [HASH.replace("{SHA512-CRYPT}", "{PLAIN}"), `${HASH}\nx@y:z`, `${HASH}:0:0`, "secret", HASH.slice(0, -1)];
  for (const passwordHash of broken) {
    assertRefused(() => renderMailTables([account({}, { mailboxes: [{ localPart: "info", domain: "alice.example", passwordHash, quotaMb: 1, enabled: true }] })]), "password hash");
  }
  for (const selector of ["", "S1", "1s", "s.1", "s 1", "s\n1", "s_1", "s/1", "s-", `s${"a".repeat(63)}`]) {
    assertRefused(() => renderMailTables([account({}, { dkim: [{ domain: "alice.example", selector }] })]), "DKIM selector");
  }
  assert.throws(() => renderMailTables([account({}, { dkim: [{ domain: "bob.example", selector: "s1" }] })]), /not a mail domain of alice/);
  assert.throws(() => renderMailTables([account({}, { dkim: [{ domain: "alice.example", selector: "s1" }, { domain: "alice.example", selector: "s2" }] })]), /two DKIM selectors/);
  assertRefused(() => renderMailTables([account({ uid: 0 })]), "uid");
  assertRefused(() => renderMailTables([account({ gid: Number.NaN })]), "gid");
  assertRefused(() => renderMailTables([account({}, { mailboxes: [{ localPart: "info", domain: "alice.example", passwordHash: HASH, quotaMb: 0, enabled: true }] })]), "quota");
  assertRefused(() => renderMailTables([account({ username: "../etc" })]), "maildir");
  // A mailbox or alias outside the account's own mail domains, and one domain claimed twice.
  assert.throws(() => renderMailTables([account({}, { mailboxes: [{ localPart: "x", domain: "bob.example", passwordHash: HASH, quotaMb: 1, enabled: true }] })]), /not a mail domain of alice/);
  assert.throws(() => renderMailTables([account(), account({ username: "mallory", uid: 1005, gid: 1005 }, { mailboxes: [], aliases: [] })]), /claimed by alice and mallory/);
  assert.throws(() => renderMailTables([account({}, { aliases: [{ localPart: "x", domain: "alice.example", targets: [] }] })]), /no targets/);
});

test("a forwarded domain: deferred while its account's mail is here, then relayed to the move's target; a hostile target refused", () => {
  const header = "# Written by the hosting panel from its records; edit through the panel.\n";
  const forwarded = [{ domain: "alice.example", target: "192.0.2.7" }];
  // In the switch: the account's mail is still here.
  const during = renderMailTables([account()], forwarded, 2525);
  assert.equal(during.moving_domains, `${header}alice.example 450 4.3.2 Mail for alice.example is moving to another server; try again later\n`);
  assert.equal(during.relay_domains, header);
  assert.equal(during.transport, header);
  // After the cleaning: relayed, and no longer a virtual domain here.
  const after = renderMailTables([], forwarded, 2525);
  assert.equal(after.moving_domains, header);
  assert.equal(after.relay_domains, `${header}alice.example OK\n`);
  assert.equal(after.transport, `${header}alice.example relay:[192.0.2.7]:2525\n`);
  assert.equal(after.virtual_domains, header);
  // A forward kept by a version before the relay (no target): deferred until it ends.
  assert.match(renderMailTables([], [{ domain: "alice.example", target: null }]).moving_domains, /^alice\.example 450 /m);
  for (const target of ["192.0.2.7]:25\nevil.example", "smtp:evil.example", "::1", ""]) {
    assertRefused(() => renderMailTables([], [{ domain: "alice.example", target }]), "relay target");
  }
  assertRefused(() => renderMailTables([], [{ domain: "alice.example\nevil.example", target: "192.0.2.7" }]), "mail domain");
});

test("a mail host's certificate: Postfix's SNI line (key, then chain) and Dovecot's local_name block, each with its fingerprint; only a mail domain's host, a fingerprint as such", () => {
  const header = "# Written by the hosting panel from its records; edit through the panel.\n";
  const fingerprint = Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(2, "0").toUpperCase()).join(":");
  const tables = renderMailTables([account()], [], 25, [{ host: "mail.alice.example", fingerprint }]);
  const files = "/srv/certs/mail.alice.example";
  assert.equal(tables.sni, `${header}# mail.alice.example ${fingerprint}\nmail.alice.example ${files}/privkey.pem ${files}/fullchain.pem\n`);
  assert.equal(
    tables.dovecot_sni,
    `${header}# ${fingerprint}\nlocal_name mail.alice.example {\n  ssl_cert = <${files}/fullchain.pem\n  ssl_key = <${files}/privkey.pem\n}\n`,
  );
  assert.equal(renderMailTables([account()]).sni, header);
  // Another account's host (or none's), or a name that is no mail host.
  assert.throws(() => renderMailTables([account()], [], 25, [{ host: "mail.bob.example", fingerprint }]), /no mail domain's host name here/);
  assert.throws(() => renderMailTables([account()], [], 25, [{ host: "alice.example", fingerprint }]), /no mail domain's host name here/);
  for (const host of ["mail.alice.example }\nssl_key = </etc/shadow", "mail.alice.example\n.evil", "../mail.alice.example"]) {
    assertRefused(() => renderMailTables([account()], [], 25, [{ host, fingerprint }]), "mail host");
  }
  for (const bad of ["", "AB", `${fingerprint}\nmail.evil.example /etc/shadow`, fingerprint.toLowerCase()]) {
    assertRefused(() => renderMailTables([account()], [], 25, [{ host: "mail.alice.example", fingerprint: bad }]), "certificate fingerprint");
  }
});

test("doveadm quota get's table is read strictly: the header, one STORAGE row, a whole number of KiB; anything else is refused", () => {
  const header = "Quota name\tType\tValue\tLimit\t%";
  const table = (...rows: string[]) => `${[header, ...rows].join("\n")}\n`;
  // As Dovecot 2.3.19 prints it (doveadm -f tab quota get -u ADDRESS).
  assert.equal(parseQuotaGet("a@alice.example", table("User quota\tSTORAGE\t2088\t1024\t203", "User quota\tMESSAGE\t1\t-\t0")), 2088);
  assert.equal(parseQuotaGet("a@alice.example", table("User quota\tSTORAGE\t0\t-\t0")), 0);
  for (const output of [
    "",
    "Error: something\n",
    table(),
    table("User quota\tSTORAGE\t-5\t1024\t0"),
    table("User quota\tSTORAGE\t1e9\t1024\t0"),
    table("User quota\tSTORAGE\t12\t1024\t0", "Other\tSTORAGE\t13\t1024\t0"),
    table("User quota\tSTORAGE\t12 \t1024\t0"),
    `x${table("User quota\tSTORAGE\t12\t1024\t0")}`,
  ]) {
    assert.throws(() => parseQuotaGet("a@alice.example", output), /a@alice\.example/, JSON.stringify(output));
  }
});
