import { NextResponse } from "next/server";
import { getDb } from "@/db/client";
import { issueSessionCookie } from "@/lib/admin-session/options";
import { env } from "@/lib/env";
import { consumeSsoToken, type SsoRefusal } from "@/lib/sso/service";

const refusals: Record<SsoRefusal, { status: number; text: string }> = {
  unknown: { status: 401, text: "This sign-in link is not valid." },
  used: { status: 410, text: "This sign-in link has already been used. Links work once." },
  expired: { status: 410, text: "This sign-in link has expired. Links are valid for 60 seconds." },
};

function refusalPage(refusal: SsoRefusal) {
  const { status, text } = refusals[refusal];
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in link refused</title></head>
<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem">
<h1>Sign-in link refused</h1><p>${text}</p><p>Ask your integration for a new link, or <a href="/login">sign in</a>.</p></body></html>`;
  return new Response(html, { status, headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } });
}

// GET /sso?token=… — consumes a single sign-on token, starts the admin session, redirects to the dashboard
export async function GET(request: Request) {
  const token = new URL(request.url).searchParams.get("token") ?? "";
  if (!/^[0-9A-Za-z]{1,100}$/.test(token)) return refusalPage("unknown");
  const result = await consumeSsoToken(await getDb(), token);
  if (!("admin" in result) || !result.admin) return refusalPage(result.refusal ?? "unknown");
  const cookie = await issueSessionCookie(result.admin);
  const response = NextResponse.redirect(`${env().publicUrl}/admin`, 303);
  response.cookies.set(cookie.name, cookie.value, cookie.options);
  response.headers.set("cache-control", "no-store");
  return response;
}
