import assert from "node:assert/strict";
import { test } from "node:test";
import { runsToKeep } from "@/lib/backups/service";

// Retention keeps whole runs (lib/backups/service.ts runsToKeep): restic's own --keep-* grouped
// by tags kept every run, each run's tag set being unique.

const run = (id: string, time: string) => ({ id, time });

test("the newest run of each of the last days, weeks and months is kept, and nothing else", () => {
  const runs = [
    run("a", "2026-11-26T02:00:00Z"),
    run("b", "2026-11-26T01:00:00Z"), // same day as a, older
    run("c", "2026-11-25T02:00:00Z"),
    run("d", "2026-11-18T02:00:00Z"), // the week before
    run("e", "2026-10-03T02:00:00Z"), // October
    run("f", "2026-09-03T02:00:00Z"), // September
  ];
  assert.deepEqual([...runsToKeep(runs, { last: 0, daily: 1, weekly: 1, monthly: 1 })].sort(), ["a"]);
  assert.deepEqual([...runsToKeep(runs, { last: 0, daily: 2, weekly: 1, monthly: 1 })].sort(), ["a", "c"]);
  assert.deepEqual([...runsToKeep(runs, { last: 0, daily: 2, weekly: 2, monthly: 1 })].sort(), ["a", "c", "d"]);
  assert.deepEqual([...runsToKeep(runs, { last: 0, daily: 1, weekly: 1, monthly: 3 })].sort(), ["a", "e", "f"]);
  assert.deepEqual([...runsToKeep([], { last: 0, daily: 7, weekly: 4, monthly: 6 })], []);
});

test("the last N runs are kept besides, several of one day among them", () => {
  const runs = [run("a", "2026-11-26T02:00:00Z"), run("b", "2026-11-26T01:00:00Z"), run("c", "2026-11-26T00:30:00Z"), run("d", "2026-11-20T02:00:00Z")];
  assert.deepEqual([...runsToKeep(runs, { last: 2, daily: 1, weekly: 1, monthly: 1 })].sort(), ["a", "b"]);
  assert.deepEqual([...runsToKeep(runs, { last: 3, daily: 2, weekly: 1, monthly: 1 })].sort(), ["a", "b", "c", "d"]);
});

test("ISO weeks: a Sunday belongs to the week that began the Monday before", () => {
  const runs = [run("sunday", "2026-11-29T12:00:00Z"), run("monday", "2026-11-23T12:00:00Z"), run("prior-sunday", "2026-11-22T12:00:00Z")];
  assert.deepEqual([...runsToKeep(runs, { last: 0, daily: 1, weekly: 2, monthly: 1 })].sort(), ["prior-sunday", "sunday"]);
});
