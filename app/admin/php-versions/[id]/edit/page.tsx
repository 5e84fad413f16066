import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { recordOr404 } from "@/app/admin/record-or-404";
import { requireAdminSession } from "@/lib/admin-session/session";
import { getPhpVersion } from "@/lib/php/service";
import { PhpVersionForm } from "../../php-version-form";

export const metadata: Metadata = { title: "Edit PHP version" };

export default async function EditPhpVersionPage({ params }: { params: Promise<{ id: string }> }) {
  const { db } = await requireAdminSession();
  const php = await recordOr404((await params).id, (id) => getPhpVersion(db, id));
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "PHP versions", href: "/admin/php-versions" }, { label: `PHP ${php.version}` }]} />
      <h1>Edit PHP {php.version}</h1>
      <PhpVersionForm phpVersionId={php.id} initial={{ version: php.version }} />
    </>
  );
}
