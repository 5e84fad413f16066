import { NextResponse } from "next/server";
import { getDb } from "@/db/client";
import { issueSessionCookie } from "@/lib/admin-session/options";
import { clientAddressOf } from "@/lib/http/client-address";
import { ssoRefusalPage } from "@/lib/sso/page";
import { consumeSsoToken } from "@/lib/sso/service";

// GET /sso?token=… — uses a single sign-on token: starts the admin's session and redirects to the
// dashboard, or answers a small page saying why nobody was signed in
export async function GET(request: Request) {
  const token = new URL(request.url).searchParams.get("token");
  const result = await consumeSsoToken(await getDb(), token, clientAddressOf(request));
  if (!result.ok) return ssoRefusalPage(result.reason);
  const cookie = await issueSessionCookie(result.admin);
  const response = NextResponse.redirect(result.redirectUrl, 303);
  response.cookies.set(cookie.name, cookie.value, cookie.options);
  response.headers.set("cache-control", "no-store");
  response.headers.set("referrer-policy", "no-referrer");
  return response;
}
