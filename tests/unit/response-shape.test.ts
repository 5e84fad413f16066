import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { domainRecordSchema } from "@/lib/domains/schemas";
import { operations } from "@/lib/http/registry";
import { responseCopy, responseShaper, ResponseShapeError } from "@/lib/http/response-shape";

// The guarantee behind every API answer (lib/http/response-shape.ts): what is sent carries no
// field outside the operation's response schema, whatever the handler returned. Proven here for
// every operation of the registry, on a value built from its own schema with extra "columns"
// hidden at every level.

process.env.PANEL_CHECK_RESPONSES = "1";

const LEAK = "secret_hash";

/** A valid value of `schema`, every object carrying an extra field the schema does not name. */
function sample(schema: z.core.$ZodType): unknown {
  const def = schema._zod.def;
  switch (def.type) {
    case "object": {
      const value: Record<string, unknown> = { [LEAK]: "$2b$10$leaked", password: { clear: "leaked" } };
      for (const [key, field] of Object.entries((def as z.core.$ZodObjectDef).shape)) value[key] = sample(field);
      return value;
    }
    case "array":
      return [sample((def as z.core.$ZodArrayDef).element), sample((def as z.core.$ZodArrayDef).element)];
    case "nullable":
      return sample((def as z.core.$ZodNullableDef).innerType);
    case "optional":
      return sample((def as z.core.$ZodOptionalDef).innerType);
    case "record":
      return { "some-key": sample((def as z.core.$ZodRecordDef).valueType) };
    case "tuple":
      return (def as z.core.$ZodTupleDef).items.map(sample);
    case "string": {
      const format = (def as z.core.$ZodStringFormatDef).format;
      if (format === "datetime") return new Date(0).toISOString();
      if (format === "url") return "https://panel.example.com/sso?token=t";
      if (format === undefined) return "text";
      throw new Error(`no sample for a ${format} string: teach this test`);
    }
    case "number":
      return 1;
    case "boolean":
      return true;
    case "enum":
      return Object.values((def as z.core.$ZodEnumDef).entries)[0];
    case "literal":
      return [...(def as z.core.$ZodLiteralDef<z.core.util.Literal>).values][0];
    case "null":
      return null;
    case "unknown":
    case "any":
      return { anything: ["the schema lets it through"] };
    default:
      throw new Error(`no sample for a ${def.type} schema: teach this test`);
  }
}

/** Fails if `value` has a key at a position where `schema` does not name it. */
function assertOnlySchemaFields(schema: z.core.$ZodType, value: unknown, path: string) {
  const def = schema._zod.def;
  if (value === null || value === undefined) return;
  switch (def.type) {
    case "object": {
      const shape = (def as z.core.$ZodObjectDef).shape;
      for (const key of Object.keys(value as object)) {
        assert.ok(key in shape, `${path}.${key} is not in the schema`);
        assertOnlySchemaFields(shape[key], (value as Record<string, unknown>)[key], `${path}.${key}`);
      }
      return;
    }
    case "array":
      for (const element of value as unknown[]) assertOnlySchemaFields((def as z.core.$ZodArrayDef).element, element, `${path}[]`);
      return;
    case "nullable":
    case "optional":
      return assertOnlySchemaFields((def as z.core.$ZodNullableDef).innerType, value, path);
    case "record":
      for (const field of Object.values(value as object)) {
        assertOnlySchemaFields((def as z.core.$ZodRecordDef).valueType, field, `${path}{}`);
      }
      return;
    case "tuple":
      (value as unknown[]).forEach((element, index) => assertOnlySchemaFields((def as z.core.$ZodTupleDef).items[index], element, `${path}[${index}]`));
      return;
    case "unknown":
    case "any":
      return;
    default:
      assert.ok(typeof value !== "object", `${path} is an object where the schema has a ${def.type}`);
  }
}

test("the registry has operations to check", () => {
  assert.ok(operations.length >= 29, `only ${operations.length} operations`);
});

for (const operation of operations) {
  test(`${operation.method} ${operation.path}: the response carries no field outside its schema`, () => {
    const value = sample(operation.response);
    const sent = responseCopy(operation.response)(value);
    assert.doesNotMatch(JSON.stringify(sent), new RegExp(`${LEAK}|leaked`));
    assertOnlySchemaFields(operation.response, sent, "");
    // The copy is what zod itself makes of a valid value, so skipping zod in production changes nothing.
    assert.equal(JSON.stringify(sent), JSON.stringify(operation.response.parse(value)));
  });
}

/** A valid domain record, whatever fields the schema has grown. */
const domain = domainRecordSchema.parse(sample(domainRecordSchema));

test("a row where the schema has a scalar is refused, not sent", () => {
  const copy = responseCopy(domainRecordSchema);
  assert.throws(() => copy({ ...domain, domain: { secretHash: "x" } }), ResponseShapeError);
  assert.throws(() => copy({ ...domain, created_at: new Date(0) }), ResponseShapeError);
  assert.throws(() => copy({ ...domain, php_version: "8.3" }), ResponseShapeError);
  assert.throws(() => copy([domain]), ResponseShapeError);
});

test("a missing required field is refused", () => {
  const { domain: _, ...withoutName } = domain;
  assert.throws(() => responseCopy(domainRecordSchema)(withoutName), ResponseShapeError);
});

test("a response schema that lets unknown fields through is refused when the route is built", () => {
  assert.throws(() => responseCopy(z.looseObject({ id: z.number() })), ResponseShapeError);
  assert.throws(() => responseCopy(z.object({ id: z.number() }).catchall(z.string())), ResponseShapeError);
});

test("with PANEL_CHECK_RESPONSES=1 a value zod refuses is refused, though the copy would pass it", () => {
  const wrongType = { ...domain, id: "1" };
  assert.doesNotThrow(() => responseCopy(domainRecordSchema)(wrongType));
  assert.throws(() => responseShaper(domainRecordSchema)(wrongType), ResponseShapeError);
  assert.deepEqual(responseShaper(z.array(domainRecordSchema))([domain]), [domain]);
});
