import { and, eq, gt, isNull, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "@/db/client";
import { adminUsers, ssoTokens } from "@/db/schema";
import { randomBase62, sha256Hex } from "@/lib/api-keys/tokens";
import { recordAudit } from "@/lib/audit/service";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import type { ssoTokenSchema } from "./operations";

// Single sign-on links (DESIGN.md "Admin web UI"): an admin API key asks for a token; the link
// PUBLIC_URL/sso?token=… signs the browser in as the admin the key belongs to — never another —
// once, within 60 s, and only while that admin is enabled. A key that belongs to no admin (made
// on the command line without --owner) gets no link. Only the token's SHA-256 is stored.

export const SSO_TOKEN_TTL_S = 60;

export type SsoToken = z.infer<typeof ssoTokenSchema>;

export interface SsoRequester {
  keyId: number;
  /** The admin the key belongs to; null for a command-line key without an owner (refused). */
  adminUserId: number | null;
  clientIp: string | null;
}

const NO_OWNER =
  "This API key belongs to no admin, so it cannot sign anyone in: use a key an admin made in Settings › API Keys, " +
  "or one made with `panel key create --admin --owner EMAIL`";

export async function createSsoToken(db: Database, requester: SsoRequester): Promise<SsoToken> {
  const token = randomBase62(43);
  try {
    return await db.transaction(async (tx) => {
      if (requester.adminUserId === null) throw new AppError("FORBIDDEN", NO_OWNER);
      // Shared lock: the admin cannot be disabled or removed while their token is being made.
      const [admin] = await tx.select().from(adminUsers).where(eq(adminUsers.id, requester.adminUserId)).for("share");
      if (!admin?.isEnabled) throw new AppError("FORBIDDEN", "This API key's admin is disabled");
      const [row] = await tx
        .insert(ssoTokens)
        .values({
          tokenHash: sha256Hex(token),
          adminUserId: admin.id,
          apiKeyId: requester.keyId,
          expiresAt: sql`now() + make_interval(secs => ${SSO_TOKEN_TTL_S})`,
        })
        .returning({ id: ssoTokens.id });
      await recordAudit(
        tx,
        { type: "api_key", id: requester.keyId, ip: requester.clientIp },
        { action: "sso_token.create", targetType: "admin_user", targetId: admin.id, details: { sso_token_id: row.id } },
      );
      const { publicUrl } = env();
      return { sso_url: `${publicUrl}/sso?token=${token}`, redirect_url: `${publicUrl}/admin`, token };
    });
  } catch (error) {
    if (error instanceof AppError) throw error;
    console.error("[sso] could not generate a token:", error);
    throw new AppError("INTERNAL", "Could not generate the SSO token: the database did not accept it");
  }
}

export type SsoConsumption =
  | { ok: true; admin: { id: number; email: string; name: string; sessionGeneration: number }; redirectUrl: string }
  | { ok: false; reason: "missing" | "unknown" | "used" | "expired" | "disabled" };

/**
 * Uses a token: one conditional UPDATE (unused and unexpired), so two browsers racing with the
 * same link cannot both get in. The use is audited in the same transaction.
 */
export async function consumeSsoToken(db: Database, token: string | null, clientIp: string | null): Promise<SsoConsumption> {
  if (!token) return { ok: false, reason: "missing" };
  const tokenHash = sha256Hex(token);
  return db.transaction(async (tx) => {
    const [used] = await tx
      .update(ssoTokens)
      .set({ usedAt: sql`now()` })
      .where(and(eq(ssoTokens.tokenHash, tokenHash), isNull(ssoTokens.usedAt), gt(ssoTokens.expiresAt, sql`now()`)))
      .returning({ id: ssoTokens.id, adminUserId: ssoTokens.adminUserId });
    if (!used) {
      const [found] = await tx
        .select({ usedAt: ssoTokens.usedAt })
        .from(ssoTokens)
        .where(eq(ssoTokens.tokenHash, tokenHash));
      return { ok: false, reason: !found ? "unknown" : found.usedAt ? "used" : "expired" } as const;
    }
    const [admin] = await tx
      .select({ id: adminUsers.id, email: adminUsers.email, name: adminUsers.name, sessionGeneration: adminUsers.sessionGeneration, isEnabled: adminUsers.isEnabled })
      .from(adminUsers)
      .where(eq(adminUsers.id, used.adminUserId));
    // Disabled between the link's making and its use: the token is spent, nobody signed in.
    if (!admin.isEnabled) return { ok: false, reason: "disabled" } as const;
    await recordAudit(
      tx,
      { type: "admin_user", id: admin.id, ip: clientIp },
      { action: "sso_token.use", targetType: "admin_user", targetId: admin.id, details: { sso_token_id: used.id } },
    );
    return { ok: true, admin, redirectUrl: `${env().publicUrl}/admin` } as const;
  });
}
