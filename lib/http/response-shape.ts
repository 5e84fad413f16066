import type { z } from "zod";
import { env } from "@/lib/env";

// What an operation sends is built from its response schema, so no column can leak: a copy that
// takes an object's keys from the schema's shape (never from the value), arrays element by
// element, and at every other position only a plain value (string, number, boolean, null) — an
// object where the schema has a scalar is an error, not a leak. Handlers are typed against the
// same schema (z.input), so zod's per-field checks are not repeated on every production request;
// with PANEL_CHECK_RESPONSES=1 (test servers) or outside production (next dev) the full zod parse
// runs as well and must agree with the copy, byte for byte.

type Copy = (value: unknown) => unknown;

export class ResponseShapeError extends Error {}

/** Positions whose value is sent as it is once it is not an object. */
const SCALARS = new Set(["string", "number", "boolean", "enum", "literal", "null"]);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function mismatch(path: string, expected: string): never {
  throw new ResponseShapeError(`response does not match its schema at ${path || "(root)"}: expected ${expected}`);
}

function compile(schema: z.core.$ZodType, path: string): Copy {
  const def = schema._zod.def;
  switch (def.type) {
    case "object": {
      const { shape, catchall } = def as z.core.$ZodObjectDef;
      if (catchall && catchall._zod.def.type !== "never") {
        throw new ResponseShapeError(`response schema at ${path || "(root)"} lets unknown fields through`);
      }
      const fields = Object.entries(shape).map(([key, field]) => [key, compile(field, `${path}.${key}`)] as const);
      return (value) => {
        if (!isPlainObject(value)) mismatch(path, "an object");
        const copy: Record<string, unknown> = {};
        for (const [key, copyField] of fields) {
          const field = copyField(value[key]);
          if (field !== undefined) copy[key] = field;
        }
        return copy;
      };
    }
    case "array": {
      const copyElement = compile((def as z.core.$ZodArrayDef).element, `${path}[]`);
      return (value) => {
        if (!Array.isArray(value)) mismatch(path, "an array");
        return value.map(copyElement);
      };
    }
    case "nullable": {
      const copyInner = compile((def as z.core.$ZodNullableDef).innerType, path);
      return (value) => (value === null ? null : copyInner(value));
    }
    case "optional": {
      const copyInner = compile((def as z.core.$ZodOptionalDef).innerType, path);
      return (value) => (value === undefined ? undefined : copyInner(value));
    }
    case "record": {
      const { keyType, valueType } = def as z.core.$ZodRecordDef;
      if (keyType._zod.def.type !== "string") break;
      const copyValue = compile(valueType, `${path}{}`);
      return (value) => {
        if (!isPlainObject(value)) mismatch(path, "an object");
        const copy: Record<string, unknown> = {};
        for (const key of Object.keys(value)) copy[key] = copyValue(value[key]);
        return copy;
      };
    }
    case "unknown":
    case "any":
      // The schema itself lets anything through here (GoAccess's report): zod would too.
      return (value) => value;
    default:
      if (SCALARS.has(def.type)) {
        return (value) => {
          if (value === undefined || (typeof value === "object" && value !== null)) mismatch(path, def.type);
          return value;
        };
      }
  }
  // Anything else (unions, transforms…): zod itself, which validates and strips.
  const parse = (schema as z.ZodType).parse.bind(schema);
  return (value) => parse(value);
}

/** The copy alone (the production path), built once per schema; throws ResponseShapeError. */
export const responseCopy = (schema: z.ZodType): Copy => compile(schema, "");

/**
 * The body an operation sends for a handler's result (see the top of this file). Built once per
 * schema; throws ResponseShapeError (a 500, logged) when the result does not fit.
 */
export function responseShaper(schema: z.ZodType): (result: unknown) => unknown {
  const copy = responseCopy(schema);
  return (result) => {
    const body = copy(result);
    if (env().checkResponses) {
      const parsed = schema.safeParse(result);
      if (!parsed.success) throw new ResponseShapeError(`response does not match its schema: ${parsed.error.message}`);
      if (JSON.stringify(parsed.data) !== JSON.stringify(body)) {
        throw new ResponseShapeError("response copy differs from the schema's parse");
      }
    }
    return body;
  };
}
