import { notFound } from "next/navigation";

// Any /admin URL no page answers: the admin frame's 404 (app/admin/not-found.tsx), not the bare one.
export default function MissingAdminPage(): never {
  notFound();
}
