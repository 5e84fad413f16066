import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { ResellerForm } from "../reseller-form";

export const metadata: Metadata = { title: "Create reseller" };

export default function CreateResellerPage() {
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Resellers", href: "/admin/resellers" }, { label: "Create" }]} />
      <h1>Create reseller</h1>
      <ResellerForm />
    </>
  );
}
