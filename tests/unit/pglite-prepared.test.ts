import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { PreparingPGlite } from "@/db/pglite";

// db/pglite.ts: PGlite's query() run as named prepared statements. Every answer must be what
// PGlite's own path gives (transaction queries still take that path: the reference here).

let dataDir: string;
let pglite: PreparingPGlite;

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-pglite-prepared-"));
  pglite = await PreparingPGlite.open(dataDir);
  await pglite.exec(`
    create table item (id serial primary key, name text not null unique, tags text[] not null default '{}',
      meta jsonb, active boolean not null default true, created_at timestamptz not null default now(), size bigint);
  `);
});
after(async () => {
  await pglite?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The same query through PGlite's own path (a transaction's query). */
const throughPgliteItself = (text: string, params?: unknown[], options?: Parameters<PreparingPGlite["query"]>[2]) =>
  pglite.transaction((tx) => tx.query(text, params, options));

test("answers exactly as PGlite's own query(): rows, fields, counts, types, row modes, parsers", async () => {
  const insert = "insert into item (name, tags, meta, active, size) values ($1, $2, $3, $4, $5) returning id, name, tags, meta, active, size";
  const inserted = await pglite.query(insert, ["one", ["a", "b,c", 'd"e'], { nested: [1, 2] }, false, 9007199254740993n]);
  const reference = await throughPgliteItself(insert, ["two", [], null, true, null]);
  assert.deepEqual(Object.keys(inserted).sort(), Object.keys(reference).sort());
  assert.deepEqual(inserted.fields, reference.fields);
  assert.equal(inserted.affectedRows, 1);
  assert.deepEqual(inserted.rows, [
    { id: 1, name: "one", tags: ["a", "b,c", 'd"e'], meta: { nested: [1, 2] }, active: false, size: 9007199254740993n },
  ]);

  const queries: [string, unknown[]][] = [
    ["select * from item order by id", []],
    ["select id, name from item where name = $1 or id = $2", ["two", 1]],
    ["select count(*)::int as n, $1::text as echo from item", [null]],
    ["update item set active = not active where id > $1", [0]],
    ["delete from item where id = $1", [12345]],
  ];
  for (const [text, params] of queries) {
    for (const options of [undefined, { rowMode: "array" as const }, { rowMode: "array" as const, parsers: { 1184: (value: string) => value } }]) {
      const expected = await throughPgliteItself(text, params, options);
      // Twice: once parsing the statement, once running it by name.
      for (let run = 0; run < 2; run++) {
        const actual = await pglite.query(text, params, options);
        if (text.startsWith("update")) {
          // Each update flips the rows back and forth: compare the shape and the counts only.
          assert.equal(actual.affectedRows, expected.affectedRows);
          assert.deepEqual(actual.fields, expected.fields);
        } else {
          assert.deepEqual(actual, expected, `${text} ${JSON.stringify(options)}`);
        }
      }
    }
  }
});

test("a known statement costs one call into the backend; a new one two", async () => {
  const original = pglite.execProtocolStream.bind(pglite);
  let calls = 0;
  pglite.execProtocolStream = (...args) => {
    calls++;
    return original(...args);
  };
  try {
    const text = "select name from item where id = $1 and $2::int > 0";
    await pglite.query(text, [1, 1]);
    assert.equal(calls, 2);
    calls = 0;
    await pglite.query(text, [2, 1]);
    assert.equal(calls, 1);
  } finally {
    pglite.execProtocolStream = original;
  }
});

test("database errors carry their code and statement, and leave the backend ready", async () => {
  const insert = "insert into item (name) values ($1)";
  await pglite.query(insert, ["unique-name"]);
  await assert.rejects(pglite.query(insert, ["unique-name"]), (error: Error & { code?: string; query?: string }) => {
    assert.equal(error.code, "23505");
    assert.equal(error.query, insert);
    return true;
  });
  await assert.rejects(pglite.query("selec nonsense"), { code: "42601" });
  await assert.rejects(pglite.query("select $1::int", ["not a number"]), { code: "22P02" });
  assert.deepEqual((await pglite.query("select 1 as ok")).rows, [{ ok: 1 }]);
  // The refused statement was not kept: the same text fails again the same way.
  await assert.rejects(pglite.query("selec nonsense"), { code: "42601" });
});

test("a statement whose table changed shape is parsed again", async () => {
  await pglite.exec("create table reshaped (a int)");
  await pglite.query("insert into reshaped values ($1)", [1]);
  assert.deepEqual((await pglite.query("select * from reshaped")).rows, [{ a: 1 }]);
  await pglite.exec("alter table reshaped add column b text default 'x'");
  assert.deepEqual((await pglite.query("select * from reshaped")).rows, [{ a: 1, b: "x" }]);
  await pglite.forgetPreparedStatements();
  assert.deepEqual((await pglite.query("select * from reshaped")).rows, [{ a: 1, b: "x" }]);
});

test("at most 500 statements stay prepared, the least recently used closed first", async () => {
  const kept = "select 'kept' as which, $1::int as n";
  for (let i = 0; i < 600; i++) {
    assert.deepEqual((await pglite.query(`select ${i} as n`)).rows, [{ n: i }]);
    if (i % 100 === 0) await pglite.query(kept, [i]);
  }
  const { rows } = await pglite.query<{ statements: number; kept: number }>(
    "select count(*)::int as statements, count(*) filter (where statement = $1)::int as kept from pg_prepared_statements",
    [kept],
  );
  assert.ok(rows[0].statements <= 500, `${rows[0].statements} statements prepared`);
  assert.equal(rows[0].kept, 1);
  assert.deepEqual((await pglite.query("select 0 as n")).rows, [{ n: 0 }]);
});

test("a query waits for another caller's open transaction and never sees its uncommitted rows", async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let inserted!: () => void;
  const insertDone = new Promise<void>((resolve) => (inserted = resolve));
  const transaction = pglite.transaction(async (tx) => {
    await tx.query("insert into item (name) values ('uncommitted')");
    inserted();
    await held;
    await tx.rollback();
  });
  await insertDone;
  const count = pglite.query<{ n: number }>("select count(*)::int as n from item where name = $1", ["uncommitted"]);
  let answered = false;
  void count.then(() => (answered = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(answered, false, "the query ran inside the other caller's transaction");
  release();
  await transaction;
  assert.deepEqual((await count).rows, [{ n: 0 }]);
});

test("COPY … TO '/dev/blob' hands back what it wrote, as PGlite's own path does", async () => {
  const copy = "copy (select id, name from item order by id limit 2) to '/dev/blob' with (format csv)";
  const expected = await throughPgliteItself(copy);
  const actual = await pglite.query(copy);
  assert.ok(actual.blob, "no blob on the result");
  assert.equal(await actual.blob.text(), await expected.blob!.text());
  assert.equal(actual.affectedRows, expected.affectedRows);
});

test("text fields are decoded in place, not copied one by one (patches/@electric-sql+pglite+0.5.16.patch)", async () => {
  const text = "select g::text as n, repeat('é🌍', g) as s, '' as empty, null::text as missing from generate_series(1, 200) g";
  await pglite.query(text); // prepared
  const slice = ArrayBuffer.prototype.slice;
  let copies = 0;
  ArrayBuffer.prototype.slice = function (this: ArrayBuffer, ...args: Parameters<ArrayBuffer["slice"]>) {
    copies++;
    return slice.apply(this, args);
  };
  let rows: { n: string; s: string; empty: string; missing: null }[];
  try {
    ({ rows } = await pglite.query<{ n: string; s: string; empty: string; missing: null }>(text));
  } finally {
    ArrayBuffer.prototype.slice = slice;
  }
  assert.equal(rows.length, 200);
  rows.forEach((row, index) => assert.deepEqual(row, { n: String(index + 1), s: "é🌍".repeat(index + 1), empty: "", missing: null }));
  // Unpatched, PGlite copies every field into an ArrayBuffer of its own before decoding it (600 here).
  // Patched, only whole answers are copied (18 here).
  assert.ok(copies < 50, `${copies} ArrayBuffer copies for 200 rows of 3 text fields`);
});

// Last: it opens the cluster again, brief.
test("a brief PGlite (a command's, a test's own) opens with 16 MB of shared buffers, a server's with Postgres's 128 MB", async () => {
  const showSharedBuffers = async () => (await pglite.query<{ shared_buffers: string }>("show shared_buffers")).rows[0].shared_buffers;
  assert.equal(await showSharedBuffers(), "128MB");
  await pglite.close();
  pglite = await PreparingPGlite.open(dataDir, { brief: true });
  assert.equal(await showSharedBuffers(), "16MB");
  assert.equal((await pglite.query("select count(*)::int as n from item")).rows.length, 1, "the same cluster");
});
