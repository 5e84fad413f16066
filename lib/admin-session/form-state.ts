import { z } from "zod";
import { AppError, type FieldErrors } from "@/lib/errors";

/** What a server action sends back to its form: a message and errors per field. */
export type FormState = { error?: string; fieldErrors?: FieldErrors } | null;

/** Turns a service's validation failure into form errors; anything else is rethrown. */
export function formError(error: unknown): FormState {
  if (error instanceof z.ZodError) {
    const fieldErrors: FieldErrors = {};
    for (const issue of error.issues) (fieldErrors[issue.path.join(".") || "form"] ??= []).push(issue.message);
    return { error: "Please correct the highlighted fields.", fieldErrors };
  }
  if (error instanceof AppError && error.code !== "INTERNAL") return { error: error.message, fieldErrors: error.fieldErrors };
  throw error;
}
