import type { SsoConsumption } from "./service";

type Reason = Extract<SsoConsumption, { ok: false }>["reason"];

// Why an SSO link signed nobody in. A used or expired link existed and is gone for good (410);
// a missing or unknown token was never valid here (401).
const refusals: Record<Reason, { status: 401 | 403 | 410; title: string; text: string }> = {
  missing: { status: 401, title: "No sign-in token", text: "This link has no sign-in token." },
  unknown: { status: 401, title: "Invalid sign-in link", text: "This sign-in link is not valid." },
  used: { status: 410, title: "Sign-in link already used", text: "This sign-in link has already been used; each link works once." },
  expired: { status: 410, title: "Sign-in link expired", text: "This sign-in link has expired; links are valid for 60 seconds." },
  disabled: { status: 403, title: "Admin disabled", text: "The admin this link was made for is disabled." },
};

/** The small HTML page a refused SSO link answers (the texts are constants: nothing to escape). */
export function ssoRefusalPage(reason: Reason): Response {
  const { status, title, text } = refusals[reason];
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 4rem auto; padding: 0 1rem">
<h1>${title}</h1><p>${text}</p><p>Ask for a new link, or <a href="/login">sign in</a> with your email and password.</p>
</body></html>`;
  return new Response(html, {
    status,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", "referrer-policy": "no-referrer" },
  });
}
