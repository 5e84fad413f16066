import type { Metadata } from "next";
import { NotFoundMessage } from "./not-found-message";

export const metadata: Metadata = { title: "Not found" };

// The 404 of every /admin page, drawn inside the admin frame (menu, header): a record's edit page
// whose id names nothing, and any URL no page answers (app/admin/[...missing]).
export default function AdminNotFound() {
  return <NotFoundMessage />;
}
