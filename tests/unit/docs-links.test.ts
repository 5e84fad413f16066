import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { settingNames } from "@/lib/env";

// README.md is the front door and docs/*.md hold the topics; the code names the section that
// explains it (`docs/backups.md "What a backup holds"`). A file renamed or a heading reworded
// must not leave a link or a comment pointing nowhere: every relative link of the docs, and
// every `README "Heading"` / `docs/<file>.md "Heading"` in the sources, is checked here.

const ROOT = process.cwd();
const DOCS = ["README.md", ...fs.readdirSync(path.join(ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)];

/** The lines of a Markdown file outside fenced code blocks (``` or ~~~). */
function proseLines(text: string): string[] {
  let fence: string | null = null;
  return text.split("\n").map((line) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line);
    if (opening && (fence === null || opening[1].startsWith(fence))) {
      fence = fence === null ? opening[1] : null;
      return "";
    }
    return fence === null ? line : "";
  });
}

/** A heading's text as GitHub renders it: no code ticks, a link's text without its target. */
const headingText = (raw: string) => raw.replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").trim();

/** GitHub's anchor of a heading (github-slugger): lower case, punctuation but - and _ dropped, spaces to -. */
const slug = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");

interface Headings {
  texts: Set<string>;
  anchors: Set<string>;
}

const headingCache = new Map<string, Headings | null>();

/** The headings of a Markdown file (null when it does not exist); repeated anchors get -1, -2 as on GitHub. */
function headingsOf(file: string): Headings | null {
  if (!headingCache.has(file)) {
    const full = path.join(ROOT, file);
    if (!fs.existsSync(full)) {
      headingCache.set(file, null);
    } else {
      const texts = new Set<string>();
      const anchors = new Set<string>();
      const seen = new Map<string, number>();
      for (const line of proseLines(fs.readFileSync(full, "utf8"))) {
        const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
        if (!match) continue;
        const text = headingText(match[1]);
        texts.add(text);
        const base = slug(text);
        const count = seen.get(base) ?? 0;
        anchors.add(count ? `${base}-${count}` : base);
        seen.set(base, count + 1);
      }
      headingCache.set(file, { texts, anchors });
    }
  }
  return headingCache.get(file)!;
}

/** Relative links of a Markdown file: [text](target), outside code blocks and code spans. */
function relativeLinks(file: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  proseLines(fs.readFileSync(path.join(ROOT, file), "utf8")).forEach((line, index) => {
    for (const match of line.replace(/`[^`]*`/g, "").matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      links.push({ line: index + 1, target });
    }
  });
  return links;
}

test("every relative link of README.md and docs/*.md reaches a file, and a heading where it names one", () => {
  const broken: string[] = [];
  for (const file of DOCS) {
    for (const { line, target } of relativeLinks(file)) {
      const [filePart, anchor] = target.split("#", 2);
      const linked = filePart ? path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURIComponent(filePart))) : file;
      if (linked.startsWith("..") || !fs.existsSync(path.join(ROOT, linked))) {
        broken.push(`${file}:${line}: ${target} (no file ${linked})`);
        continue;
      }
      if (anchor === undefined) continue;
      const headings = linked.endsWith(".md") ? headingsOf(linked) : null;
      if (!headings?.anchors.has(anchor)) broken.push(`${file}:${line}: ${target} (no heading #${anchor} in ${linked})`);
    }
  }
  assert.deepEqual(broken, []);
});

const SOURCE_DIRS = ["lib", "app", "components", "scripts", "bench", "tests", "e2e", "db"];
const SOURCE_FILES = ["server.ts", "proxy.ts", "instrumentation.ts", "next.config.ts", ".ci/run"];

function sourceFiles(dir: string): string[] {
  if (!fs.existsSync(path.join(ROOT, dir))) return [];
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(relative);
    return /\.(ts|tsx|mjs|js|sql)$/.test(entry.name) ? [relative] : [];
  });
}

/**
 * The sections a source file cites: `README "A"`, `README.md "A"`, `docs/x.md "A", "B"` (a list
 * of quoted headings, also one that a comment wraps onto its next line).
 */
function citedSections(source: string): { doc: string; heading: string }[] {
  // A comment wrapped over lines reads as one: the line break and the next line's comment marker go.
  const joined = source.replace(/\n\s*(?:\/\/|\*|--|#)\s?/g, " ");
  const cited: { doc: string; heading: string }[] = [];
  for (const match of joined.matchAll(/(README(?:\.md)?|docs\/[a-z0-9-]+\.md)((?:,?\s+(?:and\s+)?\\?"[^"\\\n]+\\?")+)/g)) {
    const doc = match[1].startsWith("README") ? "README.md" : match[1];
    for (const heading of match[2].matchAll(/\\?"([^"\\\n]+)\\?"/g)) cited.push({ doc, heading: heading[1].replace(/\s+/g, " ") });
  }
  return cited;
}

test("every README or docs/*.md section the code cites exists", () => {
  // This file's own examples are not citations.
  const files = [...SOURCE_DIRS.flatMap(sourceFiles), ...SOURCE_FILES.filter((file) => fs.existsSync(path.join(ROOT, file)))].filter(
    (file) => file !== "tests/unit/docs-links.test.ts",
  );
  assert.ok(files.length > 100, "the sources are found");
  const missing: string[] = [];
  let count = 0;
  for (const file of files) {
    for (const { doc, heading } of citedSections(fs.readFileSync(path.join(ROOT, file), "utf8"))) {
      count++;
      const headings = headingsOf(doc);
      if (!headings) missing.push(`${file}: ${doc} "${heading}" (no file ${doc})`);
      else if (!headings.texts.has(headingText(heading))) missing.push(`${file}: ${doc} "${heading}" (no such heading)`);
    }
  }
  assert.ok(count > 50, `the citations are found (${count})`);
  assert.deepEqual(missing, []);
});

test("the citation reader finds wrapped and listed headings", () => {
  const source = [
    '// Restores (docs/backups.md "Restore", "A terminated account back"; README "Run it"):',
    '// the proxy profile (docs/applications.md "Running',
    '// applications").',
    'const message = "listed in README.md \\"Configuration\\"";',
  ].join("\n");
  assert.deepEqual(citedSections(source), [
    { doc: "docs/backups.md", heading: "Restore" },
    { doc: "docs/backups.md", heading: "A terminated account back" },
    { doc: "README.md", heading: "Run it" },
    { doc: "docs/applications.md", heading: "Running applications" },
    { doc: "README.md", heading: "Configuration" },
  ]);
});

test("GitHub's anchors: code ticks, punctuation and repeated headings", () => {
  assert.equal(slug(headingText("Static files: `npm run bench -- static-files` (j)")), "static-files-npm-run-bench----static-files-j");
  assert.equal(slug(headingText("Tenancy (the threat model)")), "tenancy-the-threat-model");
  assert.equal(slug(headingText("Single sign-on and the admin UI")), "single-sign-on-and-the-admin-ui");
});

test("every setting the panel reads is named in docs/configuration.md", () => {
  const text = fs.readFileSync(path.join(ROOT, "docs", "configuration.md"), "utf8");
  const unnamed = [...settingNames, "PANEL_ENV_FILE"].filter((name) => !text.includes(`\`${name}\``));
  assert.deepEqual(unnamed, []);
});
