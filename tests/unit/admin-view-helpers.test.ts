import assert from "node:assert/strict";
import { test } from "node:test";
import { knownTimeZone } from "@/lib/admin-session/time-zone";
import { visitorDays } from "@/lib/accounts/overview";
import { listQuerySchema, pageOfList } from "@/lib/list-query";
import { formatClock, formatTime, relativeTime } from "@/components/time";

// The pure parts of the admin's account view: GoAccess's visitors panel as days, the same search
// and paging over a list read whole, the time zone a browser's cookie may name, and how a moment reads.

test("GoAccess's visitors panel becomes days, oldest first; entries that are not days are left out", () => {
  const report = {
    visitors: {
      data: [
        { data: "20261124", hits: { count: 2, percent: "66.67" }, visitors: { count: 1, percent: "50.00" } },
        { data: "20261123", hits: { count: 1 }, visitors: { count: 1 } },
        { data: "Nov 2026", hits: { count: 9 }, visitors: { count: 9 } },
      ],
    },
  };
  assert.deepEqual(visitorDays(report), [
    { day: "2026-11-23", requests: 1, visitors: 1 },
    { day: "2026-11-24", requests: 2, visitors: 1 },
  ]);
  assert.deepEqual(visitorDays({}), [], "a report without the panel has no days");
});

test("a list read whole is searched case-insensitively and paged like the database's lists", () => {
  const names = Array.from({ length: 12 }, (_, index) => `site${index + 1}.example`);
  const query = (input: Record<string, unknown>) => listQuerySchema.parse(input);
  assert.deepEqual(pageOfList(names, query({ per_page: 5, page: 3 }), (name) => name), { rows: ["site11.example", "site12.example"], total: 12 });
  assert.deepEqual(pageOfList(names, query({ search: "SITE1", per_page: 0 }), (name) => name).total, 4);
  assert.deepEqual(pageOfList(names, query({ search: "nothing" }), (name) => name), { rows: [], total: 0 });
});

test("a time zone cookie is believed only when it names a zone; anything else is UTC", () => {
  assert.equal(knownTimeZone("Europe/Berlin"), "Europe/Berlin");
  assert.equal(knownTimeZone("Asia/Tokyo"), "Asia/Tokyo");
  for (const value of [undefined, "", "Mars/Olympus", "Europe/Berlin\nX-Injected: 1", "<script>", "A".repeat(100)]) {
    assert.equal(knownTimeZone(value), "UTC", JSON.stringify(value));
  }
});

test("a moment reads 24-hour in the zone given, with the zone named; how far it is, in words", () => {
  assert.equal(formatTime("2026-11-23T13:05:09Z", "UTC"), "2026-11-23 13:05 UTC");
  assert.equal(formatTime("2026-11-23T23:30:00Z", "Asia/Tokyo"), "2026-11-24 08:30 GMT+9");
  // restic's times carry nanoseconds and an offset.
  assert.equal(formatTime("2026-11-23T13:13:05.123456789+00:00", "UTC"), "2026-11-23 13:13 UTC");
  assert.equal(formatClock(Date.parse("2026-11-23T00:07:00Z"), "UTC"), "00:07");
  const now = Date.parse("2026-11-23T12:00:00Z");
  assert.equal(relativeTime(new Date(now - 3 * 3600_000), now), "3 hours ago");
  assert.equal(relativeTime(new Date(now + 20 * 86_400_000), now), "in 20 days");
  assert.equal(relativeTime(new Date(now - 20_000), now), "just now");
});
