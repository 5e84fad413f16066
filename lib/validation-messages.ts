import { z } from "zod";

// The admin UI's one mapping from zod's validation codes to plain words. Each message is a
// predicate written to follow the field's label ("can be at most 100 characters"), as the
// services' own messages are ("is already a plan"): the form puts the label in front ("Name can be
// at most 100 characters"). A message a schema gives itself ("is reserved by the server") is
// kept; only zod's defaults ("Too big: expected string to have <=100 characters") are replaced.

/** What both the raw issue of a parse and a finished one (in a ZodError) carry. */
type Issue = z.core.$ZodRawIssue | z.core.$ZodIssue;

const plural = (count: number | bigint, one: string, many: string) => `${count} ${Number(count) === 1 ? one : many}`;

const FORMATS: Record<string, string> = {
  email: "must be an email address",
  url: "must be a web address (https://…)",
  ipv4: "must be an IPv4 address",
  ipv6: "must be an IPv6 address",
  cidrv4: "must be an IPv4 address range (CIDR)",
  cidrv6: "must be an IPv6 address range (CIDR)",
  datetime: "must be a date and time",
  date: "must be a date",
  time: "must be a time",
  uuid: "must be a UUID",
  regex: "has characters that are not allowed here",
};

const TYPES: Record<string, string> = {
  number: "must be a number",
  int: "must be a whole number",
  boolean: "must be on or off",
  string: "must be text",
  array: "must be a list",
  object: "is not valid",
  date: "must be a date",
};

/**
 * The plain predicate for one zod issue by its code (and, for a type error, whether anything was
 * given: `received` from the raw issue's input, or from zod's default message once finished).
 */
export function plainIssueMessage(issue: Issue): string {
  switch (issue.code) {
    case "too_big": {
      const { origin, maximum, inclusive } = issue;
      if (origin === "string") return `can be at most ${plural(maximum, "character", "characters")}`;
      if (origin === "array" || origin === "set") return `can have at most ${plural(maximum, "entry", "entries")}`;
      if (origin === "file") return `can be at most ${maximum} bytes`;
      return inclusive === false ? `must be less than ${maximum}` : `can be at most ${maximum}`;
    }
    case "too_small": {
      const { origin, minimum, inclusive } = issue;
      if (origin === "string") return Number(minimum) <= 1 ? "is required" : `must be at least ${plural(minimum, "character", "characters")}`;
      if (origin === "array" || origin === "set") return Number(minimum) <= 1 ? "needs at least one entry" : `needs at least ${plural(minimum, "entry", "entries")}`;
      return inclusive === false ? `must be more than ${minimum}` : `must be at least ${minimum}`;
    }
    case "invalid_type": {
      const received = "input" in issue ? (issue.input === undefined || issue.input === null ? "nothing" : typeof issue.input) : /received (undefined|null)$/.test(issue.message) ? "nothing" : "something";
      if (received === "nothing") return "is required";
      return TYPES[issue.expected] ?? "is not valid";
    }
    case "invalid_value":
      return issue.values.length === 1 ? `must be ${String(issue.values[0])}` : `must be one of ${issue.values.map(String).join(", ")}`;
    case "invalid_format": {
      const format = issue as z.core.$ZodIssueInvalidStringFormat;
      if (format.format === "starts_with" && "prefix" in format) return `must start with “${format.prefix}”`;
      if (format.format === "ends_with" && "suffix" in format) return `must end with “${format.suffix}”`;
      if (format.format === "includes" && "includes" in format) return `must contain “${format.includes}”`;
      return FORMATS[format.format] ?? `is not a valid ${format.format}`;
    }
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "unrecognized_keys":
      return `has ${issue.keys.length === 1 ? "a field" : "fields"} it does not take: ${issue.keys.join(", ")}`;
    case "invalid_element":
    case "invalid_key":
      return "has an entry that is not valid";
    default:
      return "is not valid";
  }
}

const english = z.locales.en();

/** Whether a finished issue's message is zod's own default (not one a schema or a service wrote). */
function isZodDefault(issue: z.core.$ZodIssue): boolean {
  // A type error's default names what was received, which a finished issue no longer holds.
  if (issue.code === "invalid_type") return issue.message.startsWith(`Invalid input: expected ${issue.expected}, received `);
  return issue.message === english.localeError(issue as z.core.$ZodRawIssue) || issue.message === "Invalid input";
}

/** A finished issue's message in plain words: a schema's own message as it is, zod's default mapped. */
export const plainMessageOf = (issue: z.core.$ZodIssue): string => (isZodDefault(issue) ? plainIssueMessage(issue) : issue.message);

/**
 * The error map of a parse (`schema.parse(value, { error: plainErrorMap })`, the forms' resolver):
 * it is asked only where a schema gave no message of its own.
 */
export const plainErrorMap: z.core.$ZodErrorMap = (issue) => plainIssueMessage(issue);
