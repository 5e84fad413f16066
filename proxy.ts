import { type NextRequest, NextResponse } from "next/server";
import { adminOfCookie, sessionCookieName, sessionCookieOptions, TWO_FACTOR_SETUP_PATH } from "@/lib/admin-session/session";

// Next.js's proxy (formerly middleware) runs before anything under /admin renders: a request
// without a live admin session is sent to sign in, and nothing of the page is produced. Pages and
// server actions check the session again where they read (requireAdminSession), so neither layer
// relies on the other.

export async function proxy(request: NextRequest) {
  const cookie = request.cookies.get(sessionCookieName())?.value;
  const admin = await adminOfCookie(cookie);
  if (admin && !admin.mustSetUpTwoFactor) return NextResponse.next();
  if (admin) {
    // ADMIN_2FA_REQUIRED and no second factor yet: the set-up page, and nothing else.
    if (request.nextUrl.pathname === TWO_FACTOR_SETUP_PATH) return NextResponse.next();
    const setup = request.nextUrl.clone();
    setup.pathname = TWO_FACTOR_SETUP_PATH;
    setup.search = "";
    return request.headers.has("next-action")
      ? new NextResponse(null, { headers: { "x-action-redirect": `${TWO_FACTOR_SETUP_PATH};replace` } })
      : NextResponse.redirect(setup);
  }

  const back = request.nextUrl.clone();
  back.searchParams.delete("_rsc");
  const login = request.nextUrl.clone();
  login.pathname = "/login";
  login.search = "";
  login.searchParams.set("callbackUrl", back.pathname + back.search);
  // A form's server action is a fetch: the browser's router follows this header, not a 3xx.
  const response = request.headers.has("next-action")
    ? new NextResponse(null, { headers: { "x-action-redirect": `${login.pathname}${login.search};replace` } })
    : NextResponse.redirect(login);
  // A cookie that no longer opens a session is dropped, so the browser stops sending it (with the
  // cookie's own attributes: a browser keeps a Secure cookie that an insecure deletion names).
  if (cookie) response.cookies.set(sessionCookieName(), "", { ...sessionCookieOptions(), maxAge: 0 });
  return response;
}

export const config = { matcher: ["/admin", "/admin/:path*"] };
