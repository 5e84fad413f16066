import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { formError } from "@/lib/admin-session/form-state";
import { plainErrorMap } from "@/lib/validation-messages";

// The admin UI's one mapping from zod's codes to plain words (lib/validation-messages.ts): the
// server actions' answers (formError) and the forms' own check (a parse with plainErrorMap) say
// the same sentences; a message a schema writes itself is kept.

const schema = z.object({
  name: z.string().trim().min(1).max(100),
  ttl: z.number().int().min(60).max(86400),
  email: z.email(),
  type: z.enum(["A", "AAAA"]),
  missing: z.string(),
  items: z.array(z.string()).min(1),
  own: z.string().max(3, "is too long for a label"),
});
const bad = { name: "x".repeat(101), ttl: 10, email: "nope", type: "MX", items: [], own: "four" };

const expected = {
  name: ["can be at most 100 characters"],
  ttl: ["must be at least 60"],
  email: ["must be an email address"],
  type: ["must be one of A, AAAA"],
  missing: ["is required"],
  items: ["needs at least one entry"],
  own: ["is too long for a label"],
};

test("a server action's answer says zod's errors in plain words, every field at once, and keeps a schema's own message", () => {
  const failure = schema.safeParse(bad);
  assert.equal(failure.success, false);
  assert.deepEqual(formError(failure.error)?.fieldErrors, expected);
});

test("the forms' own check says the same words (a parse with plainErrorMap)", () => {
  const failure = schema.safeParse(bad, { error: plainErrorMap });
  const byField: Record<string, string[]> = {};
  for (const issue of failure.error!.issues) (byField[issue.path.join(".")] ??= []).push(issue.message);
  assert.deepEqual(byField, expected);
});

test("numbers: not a number, not whole, too big; strings too short", () => {
  const numbers = z.object({ a: z.number(), b: z.number().int(), c: z.number().max(5), d: z.string().min(8) });
  const failure = numbers.safeParse({ a: Number.NaN, b: 1.5, c: 6, d: "short" });
  assert.deepEqual(formError(failure.error)?.fieldErrors, {
    a: ["must be a number"],
    b: ["must be a whole number"],
    c: ["can be at most 5"],
    d: ["must be at least 8 characters"],
  });
});
