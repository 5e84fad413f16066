"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

// What a 404 says depends on what was asked for, which only the URL tells (a not-found page gets
// no params): an account that is gone may have been terminated and can come back from a backup.

const ACCOUNT_PAGE = /^\/admin\/accounts\/([^/]+)/;

export function NotFoundMessage() {
  const pathname = usePathname() ?? "";
  const account = ACCOUNT_PAGE.exec(pathname)?.[1];
  if (account && account !== "create") {
    return (
      <section className="card not-found" aria-labelledby="not-found-heading">
        <h1 id="not-found-heading">Account {decodeURIComponent(account)} does not exist</h1>
        <p>It may have been terminated. A terminated account can be made again from its backup, with its files and databases.</p>
        <p className="actions">
          <Link className="button primary" href="/admin/accounts">
            Back to accounts
          </Link>
          <Link className="button" href="/admin/backups#restore-terminated-heading">
            Restore from backup
          </Link>
        </p>
      </section>
    );
  }
  return (
    <section className="card not-found" aria-labelledby="not-found-heading">
      <h1 id="not-found-heading">Page not found</h1>
      <p>
        Nothing is at <code className="wrap">{pathname}</code>: the address may be mistyped, or what it showed has been deleted.
      </p>
      <p className="actions">
        <Link className="button primary" href="/admin">
          Go to the dashboard
        </Link>
      </p>
    </section>
  );
}
