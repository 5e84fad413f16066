import { notFound } from "next/navigation";
import { AppError } from "@/lib/errors";

/** The record behind an edit page's `[id]`: a malformed or unknown id is the 404 page. */
export async function recordOr404<Record>(id: string, load: (id: number) => Promise<Record>): Promise<Record> {
  if (!/^[1-9][0-9]{0,9}$/.test(id)) notFound();
  return load(Number(id)).catch((error) => {
    if (error instanceof AppError && error.code === "NOT_FOUND") notFound();
    throw error;
  });
}
