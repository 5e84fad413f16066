import type { Metadata } from "next";
import Link from "next/link";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { PageHeader } from "@/components/page-header";
import { accountListEntries } from "@/lib/accounts/overview";
import { listAccountsPage } from "@/lib/accounts/service";
import { listTerminatedAccounts } from "@/lib/accounts/terminated";
import { requireAdminSession } from "@/lib/admin-session/session";
import { listUsernameRuns } from "@/lib/backups/restore-account";
import { listQueryFromUrl } from "@/lib/list-query";
import { AccountsTable } from "./accounts-table";
import { TerminatedAccountsTable } from "./terminated-accounts-table";

export const metadata: Metadata = { title: "Hosting accounts" };

const FILTERS = [
  { status: null, label: "All" },
  { status: "active", label: "Active" },
  { status: "suspended", label: "Suspended" },
  { status: "terminated", label: "Terminated" },
] as const;
type Filter = (typeof FILTERS)[number]["status"];

const filterOf = (value: unknown): Filter => FILTERS.find((filter) => filter.status === value)?.status ?? null;

// The accounts list as the admin's control centre: each account linked to its page, with its
// node, disk use and last backup; filtered by status, the terminated ones with their restore points.
export default async function AccountsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { db } = await requireAdminSession();
  const params = await searchParams;
  const query = listQueryFromUrl(params);
  const status = filterOf(params.status);
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Hosting accounts" }]} />
      <PageHeader title="Hosting accounts">
        <Link className="button primary" href="/admin/accounts/create">
          Create account
        </Link>
      </PageHeader>
      <p className="muted">Each account has its main domain, its plan&apos;s quotas and, optionally, a reseller that owns it.</p>
      <nav className="filters" aria-label="Filter by status">
        {FILTERS.map((filter) => (
          <Link
            key={filter.label}
            href={filter.status ? `/admin/accounts?status=${filter.status}` : "/admin/accounts"}
            aria-current={filter.status === status ? "page" : undefined}
          >
            {filter.label}
          </Link>
        ))}
      </nav>
      {status === "terminated" ? await terminated(db, query) : await current(db, query, status ?? undefined)}
    </>
  );
}

async function current(db: Awaited<ReturnType<typeof requireAdminSession>>["db"], query: ReturnType<typeof listQueryFromUrl>, status?: "active" | "suspended") {
  const { rows, total } = await listAccountsPage(db, query, status);
  return (
    <AccountsTable
      rows={await accountListEntries(db, rows)}
      total={total}
      page={query.page}
      perPage={query.per_page}
      search={query.search}
      status={status ?? null}
    />
  );
}

/** Terminated accounts with the restore points their node's repository holds (restic is asked for the page's rows only). */
async function terminated(db: Awaited<ReturnType<typeof requireAdminSession>>["db"], query: ReturnType<typeof listQueryFromUrl>) {
  const { rows, total } = await listTerminatedAccounts(db, query);
  const withRuns = await Promise.all(
    rows.map((row) =>
      listUsernameRuns(db, row.username, row.node).then(
        ({ snapshots }) => ({ ...row, runs: snapshots, runsError: null }),
        (error: Error) => ({ ...row, runs: [], runsError: error.message }),
      ),
    ),
  );
  return <TerminatedAccountsTable rows={withRuns} total={total} page={query.page} perPage={query.per_page} search={query.search} />;
}
