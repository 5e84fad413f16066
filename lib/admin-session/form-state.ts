import { z } from "zod";
import { AppError, type FieldErrors } from "@/lib/errors";
import { plainMessageOf } from "@/lib/validation-messages";

/** What a server action sends back to its form: a message and errors per field. */
export type FormState = { error?: string; fieldErrors?: FieldErrors } | null;

/**
 * Turns a service's validation failure into form errors, zod's default messages in plain words
 * (lib/validation-messages.ts, as the form's own check says them); anything else is rethrown.
 */
export function formError(error: unknown): FormState {
  if (error instanceof z.ZodError) {
    const fieldErrors: FieldErrors = {};
    for (const issue of error.issues) (fieldErrors[issue.path.join(".") || "form"] ??= []).push(plainMessageOf(issue));
    return { error: "Please correct the highlighted fields.", fieldErrors };
  }
  if (error instanceof AppError && error.code !== "INTERNAL") return { error: error.message, fieldErrors: error.fieldErrors };
  throw error;
}
