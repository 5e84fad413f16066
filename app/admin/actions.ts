"use server";

import { revalidatePath } from "next/cache";
import { requireAdminSession } from "@/lib/admin-session/session";
import { clearMetricsCache } from "@/lib/metrics/service";

/** Dashboard "Clear cache": every metrics cache, then a fresh render. */
export async function clearDashboardCache(): Promise<void> {
  await requireAdminSession();
  await clearMetricsCache({ limit: 60, clear_stats: true, clear_system_info: true, clear_service_history: true });
  revalidatePath("/admin");
}
