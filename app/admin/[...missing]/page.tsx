import { notFound } from "next/navigation";
import { requireAdminSession } from "@/lib/admin-session/session";

// Any /admin URL no page answers: the admin frame's 404 (app/admin/not-found.tsx), not the bare one.
export default async function MissingAdminPage(): Promise<never> {
  await requireAdminSession();
  notFound();
}
