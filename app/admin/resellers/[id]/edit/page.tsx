import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { recordOr404 } from "@/app/admin/record-or-404";
import { requireAdminSession } from "@/lib/admin-session/session";
import { getReseller } from "@/lib/resellers/service";
import { ResellerForm } from "../../reseller-form";

export const metadata: Metadata = { title: "Edit reseller" };

export default async function EditResellerPage({ params }: { params: Promise<{ id: string }> }) {
  const { db } = await requireAdminSession();
  const reseller = await recordOr404((await params).id, (id) => getReseller(db, id));
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Resellers", href: "/admin/resellers" }, { label: reseller.username }]} />
      <h1>Edit reseller “{reseller.username}”</h1>
      <ResellerForm resellerId={reseller.id} initial={{ username: reseller.username }} />
    </>
  );
}
