import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { Database } from "@/db/client";
import { adminUsers, ssoTokens } from "@/db/schema";
import { firstAdminUser } from "@/lib/admins/service";
import { randomBase62, sha256Hex } from "@/lib/api-keys/tokens";
import { recordAudit } from "@/lib/audit/service";
import type { Principal } from "@/lib/auth/authenticate";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";

// Single sign-on links: a random token (only its hash is stored), single use, valid 60 s,
// signing the browser in as the admin who owns the API key (a key made on the command line
// belongs to the first admin).

export const SSO_TOKEN_TTL_S = 60;

export async function generateSsoToken(db: Database, principal: Principal) {
  const token = randomBase62(43);
  await db.transaction(async (tx) => {
    const adminId = principal.adminUserId ?? (await firstAdminUser(tx))?.id;
    if (!adminId) throw new AppError("INTERNAL", "Could not generate an SSO token: no admin user exists yet");
    const [created] = await tx
      .insert(ssoTokens)
      .values({
        tokenHash: sha256Hex(token),
        adminUserId: adminId,
        apiKeyId: principal.keyId,
        expiresAt: sql`now() + make_interval(secs => ${SSO_TOKEN_TTL_S})`,
      })
      .returning({ id: ssoTokens.id });
    await recordAudit(
      tx,
      { type: "api_key", id: principal.keyId, ip: principal.clientIp },
      { action: "sso_token.create", targetType: "admin_user", targetId: adminId, details: { sso_token_id: created.id } },
    );
  });
  const { publicUrl } = env();
  return { sso_url: `${publicUrl}/sso?token=${token}`, redirect_url: `${publicUrl}/admin`, token };
}

export type SsoRefusal = "unknown" | "used" | "expired";

/** Uses a token up, atomically: the admin it signs in, or why it signs nobody in. */
export async function consumeSsoToken(db: Database, token: string) {
  const tokenHash = sha256Hex(token);
  const [used] = await db
    .update(ssoTokens)
    .set({ usedAt: sql`now()` })
    .where(and(eq(ssoTokens.tokenHash, tokenHash), isNull(ssoTokens.usedAt), gt(ssoTokens.expiresAt, sql`now()`)))
    .returning({ adminUserId: ssoTokens.adminUserId });
  if (used) {
    const [admin] = await db.select().from(adminUsers).where(eq(adminUsers.id, used.adminUserId));
    return { admin };
  }
  const [existing] = await db.select().from(ssoTokens).where(eq(ssoTokens.tokenHash, tokenHash));
  const refusal: SsoRefusal = !existing ? "unknown" : existing.usedAt ? "used" : "expired";
  return { refusal };
}
