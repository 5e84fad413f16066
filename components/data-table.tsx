"use client";

import { type ColumnDef, flexRender, getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useEffect, useState } from "react";

// The one table of the admin pages: rows and total come from the server already searched and
// paged; search, page and page size live in the URL (?search=&page=&per_page=), so reload and
// back keep them.

export const PAGE_SIZES = [5, 10, 25, 50, 0] as const; // 0 = All

export function DataTable<Row>({
  columns,
  rows,
  total,
  page,
  perPage,
  search,
  searchLabel,
  empty,
}: {
  columns: ColumnDef<Row, unknown>[];
  rows: Row[];
  total: number;
  page: number;
  perPage: number;
  search: string;
  searchLabel: string;
  empty: React.ReactNode;
}) {
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const [query, setQuery] = useState(search);
  const table = useReactTable({ data: rows, columns, getCoreRowModel: getCoreRowModel(), manualPagination: true });
  const pages = perPage === 0 ? 1 : Math.max(1, Math.ceil(total / perPage));

  function navigate(changes: Record<string, string>) {
    const next = new URLSearchParams(params.toString());
    for (const [key, value] of Object.entries(changes)) next.set(key, value);
    router.push(`${pathname}?${next.toString()}`);
  }

  useEffect(() => {
    if (query === search) return;
    const timer = setTimeout(() => navigate({ search: query, page: "1" }), 300);
    return () => clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [query]);

  return (
    <div>
      <div className="table-tools">
        <div className="field" style={{ flex: 1, marginBottom: 0 }}>
          <label htmlFor="table-search">{searchLabel}</label>
          <input id="table-search" type="search" value={query} onChange={(event) => setQuery(event.target.value)} />
        </div>
        <div className="field" style={{ marginBottom: 0 }}>
          <label htmlFor="table-page-size">Rows per page</label>
          <select id="table-page-size" value={perPage} onChange={(event) => navigate({ per_page: event.target.value, page: "1" })}>
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size === 0 ? "All" : size}
              </option>
            ))}
          </select>
        </div>
      </div>
      {rows.length === 0 ? (
        <div className="card empty">{empty}</div>
      ) : (
        <div className="table-scroll">
          <table className="data">
            <thead>
              {table.getHeaderGroups().map((group) => (
                <tr key={group.id}>
                  {group.headers.map((header) => (
                    <th key={header.id}>{flexRender(header.column.columnDef.header, header.getContext())}</th>
                  ))}
                </tr>
              ))}
            </thead>
            <tbody>
              {table.getRowModel().rows.map((row) => (
                <tr key={row.id}>
                  {row.getVisibleCells().map((cell) => (
                    <td key={cell.id}>{flexRender(cell.column.columnDef.cell, cell.getContext())}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="pager" aria-label="Pages">
        <span className="muted">
          {total} total · page {page} of {pages}
        </span>
        <button type="button" disabled={page <= 1} onClick={() => navigate({ page: String(page - 1) })}>
          Previous
        </button>
        <button type="button" disabled={page >= pages} onClick={() => navigate({ page: String(page + 1) })}>
          Next
        </button>
      </div>
    </div>
  );
}
