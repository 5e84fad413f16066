import NextAuth from "next-auth";
import { authOptions } from "@/lib/admin-session/options";

type RouteContext = { params: Promise<{ nextauth: string[] }> };

// GET|POST /api/auth/* — next-auth (admin sign-in, sign-out, session, CSRF token)
async function handler(request: Request, context: RouteContext) {
  return NextAuth(request as never, { params: await context.params } as never, await authOptions());
}

export { handler as GET, handler as POST };
