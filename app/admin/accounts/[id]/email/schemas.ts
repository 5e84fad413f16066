import { z } from "zod";
import { createAliasBodySchema } from "@/lib/email/schemas";

// The alias form of an account's Email tab: POST /api/client/email/aliases's own fields, its
// targets typed as text — one address per line, or separated by commas or spaces.

const targets = createAliasBodySchema.shape.targets;

/** Targets typed as text, checked as the API checks its list; a refused entry is named at the field. */
export const aliasFormSchema = z.object({
  address: createAliasBodySchema.shape.address,
  targets: z.string().transform((text, ctx) => {
    const entries = text.split(/[\s,;]+/).filter(Boolean);
    const parsed = targets.safeParse(entries);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) {
      const entry = typeof issue.path[0] === "number" ? entries[issue.path[0]] : undefined;
      // An entry's refusal names the entry; the list's own ("must name at least one address") follows the label.
      ctx.addIssue({ code: "custom", message: entry === undefined ? issue.message : `“${entry}” ${issue.message}` });
    }
    return z.NEVER;
  }),
});
export type AliasFormInput = z.input<typeof aliasFormSchema>;
