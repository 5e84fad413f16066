import { getServerSession } from "next-auth";
import { redirect } from "next/navigation";
import { authOptions } from "./options";

export interface AdminSession {
  adminUserId: number;
  email: string;
  name: string;
}

/** The signed-in admin, or null. For server components, server actions and route handlers. */
export async function getAdminSession(): Promise<AdminSession | null> {
  const session = await getServerSession(await authOptions());
  const id = (session?.user as { id?: string } | undefined)?.id;
  if (!session?.user || !id) return null;
  return { adminUserId: Number(id), email: session.user.email ?? "", name: session.user.name ?? "" };
}

/** The signed-in admin; anyone else is sent to the sign-in page. */
export async function requireAdminSession(): Promise<AdminSession> {
  const session = await getAdminSession();
  if (!session) redirect("/login");
  return session;
}
