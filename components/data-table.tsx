"use client";

import { type ColumnDef, getCoreRowModel, useReactTable } from "@tanstack/react-table";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useEffect, useState, useTransition } from "react";

// The one table of the admin pages: rows and total come from the server already searched and
// paged; search, page and page size live in the URL (?search=&page=&per_page=), so reload and
// back keep them. A list whose search box may receive a secret (the API keys) passes
// `privateSearch`: a term it recognises is searched through a POST (a server action) and never
// put in the URL, and a term already in it is dropped from there.
// A page with more than one list names each (`name`): its URL keys become `<name>_search`,
// `<name>_page` and `<name>_per_page` (lib/list-query.ts listQueryFromUrl reads them so), and its
// controls' ids carry the name, so two lists never move each other.
// On a narrow screen each row is drawn as a card of "label: value" lines (globals.css), so
// every column, the row's actions included, is on the screen without scrolling sideways.

/** A search that must not enter the URL: which terms, and the server action that answers them. */
export interface PrivateSearch<Row> {
  applies: (term: string) => boolean;
  run: (term: string) => Promise<{ rows: Row[]; total: number; note: string | null }>;
}

/**
 * A column's header or cell: its template called, not mounted. The pages make their columns anew
 * on each render, and TanStack's flexRender mounts a function as a component: a new function is a
 * new component, so each render — the refresh after every row action — mounted every cell anew and
 * lost its state, a row's refusal under its Delete button with it. Templates use no hooks.
 */
function drawn<Context>(template: ((context: Context) => React.ReactNode) | React.ReactNode, context: Context): React.ReactNode {
  return typeof template === "function" ? template(context) : template;
}

/** "11–13 of 13": the rows shown and the total, as the pager says it. */
export function rowsShown(page: number, perPage: number, shown: number, total: number): string {
  if (shown === 0) return `0 of ${total}`;
  const first = perPage === 0 ? 1 : (page - 1) * perPage + 1;
  return `${first}–${first + shown - 1} of ${total}`;
}

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
  privateSearch,
  name,
}: {
  columns: ColumnDef<Row, unknown>[];
  rows: Row[];
  total: number;
  page: number;
  perPage: number;
  search: string;
  searchLabel: string;
  empty: React.ReactNode;
  privateSearch?: PrivateSearch<Row>;
  /** The list's name when the page has more than one (see above). */
  name?: string;
}) {
  const key = (param: string) => (name ? `${name}_${param}` : param);
  const controlId = (control: string) => (name ? `${name}-${control}` : control);
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const [query, setQuery] = useState(search);
  // The answer of a private search, for the term it answers.
  const [found, setFound] = useState<{ term: string; rows: Row[]; total: number; note: string | null } | null>(null);
  const [searching, startSearch] = useTransition();
  const isPrivate = (term: string) => Boolean(privateSearch?.applies(term.trim()));
  const shown = found && found.term === query ? found : null;
  const table = useReactTable({ data: shown ? shown.rows : rows, columns, getCoreRowModel: getCoreRowModel(), manualPagination: true });
  const pages = perPage === 0 ? 1 : Math.max(1, Math.ceil(total / perPage));

  function navigate(changes: Record<string, string>, how: "push" | "replace" = "push") {
    const next = new URLSearchParams(params.toString());
    for (const [param, value] of Object.entries(changes)) {
      if (value === "") next.delete(key(param));
      else next.set(key(param), value);
    }
    const href = next.size ? `${pathname}?${next.toString()}` : pathname;
    if (how === "replace") router.replace(href);
    else router.push(href);
  }

  useEffect(() => {
    if (isPrivate(query)) {
      const timer = setTimeout(() => {
        startSearch(async () => setFound({ term: query, ...(await privateSearch!.run(query.trim())) }));
        // The URL keeps no search while a private one is shown (replace: history gets no entry).
        if (search) navigate({ search: "", page: "" }, "replace");
      }, 300);
      return () => clearTimeout(timer);
    }
    if (query === search) return;
    const timer = setTimeout(() => navigate({ search: query, page: "1" }), 300);
    return () => clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [query]);

  // A page past the end (its last row was deleted): the last page that has rows.
  useEffect(() => {
    if (!shown && rows.length === 0 && total > 0 && page > pages) navigate({ page: String(pages) }, "replace");
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [rows.length, total, page, pages]);

  const headerLabels = table.getHeaderGroups()[0]?.headers.map((header) => (typeof header.column.columnDef.header === "string" ? header.column.columnDef.header : "")) ?? [];

  return (
    <div>
      <div className="table-tools">
        <div className="field" style={{ flex: 1, marginBottom: 0 }}>
          <label htmlFor={controlId("table-search")}>{searchLabel}</label>
          <input id={controlId("table-search")} type="search" autoComplete="off" value={query} onChange={(event) => setQuery(event.target.value)} />
        </div>
        <div className="field" style={{ marginBottom: 0 }}>
          <label htmlFor={controlId("table-page-size")}>Rows per page</label>
          <select id={controlId("table-page-size")} value={perPage} onChange={(event) => navigate({ per_page: event.target.value, page: "1" })}>
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size === 0 ? "All" : size}
              </option>
            ))}
          </select>
        </div>
      </div>
      {shown?.note && (
        <p className="notice" role="status">
          {shown.note}
        </p>
      )}
      {searching && !shown && (
        <p className="muted" role="status">
          Searching…
        </p>
      )}
      {(shown ? shown.rows : rows).length === 0 ? (
        <div className="card empty">{shown ? <p>Nothing matches this search.</p> : empty}</div>
      ) : (
        <div className="table-scroll">
          <table className="data">
            <thead>
              {table.getHeaderGroups().map((group) => (
                <tr key={group.id}>
                  {group.headers.map((header) => (
                    <th key={header.id}>{drawn(header.column.columnDef.header, header.getContext())}</th>
                  ))}
                </tr>
              ))}
            </thead>
            <tbody>
              {table.getRowModel().rows.map((row) => (
                <tr key={row.id}>
                  {row.getVisibleCells().map((cell, index) => (
                    <td key={cell.id} data-label={headerLabels[index] || undefined}>
                      {drawn(cell.column.columnDef.cell, cell.getContext())}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {shown ? (
        <div className="pager" aria-label="Pages">
          <span className="muted" role="status">
            {rowsShown(1, 0, shown.rows.length, shown.total)}
          </span>
        </div>
      ) : (
        <div className="pager" aria-label="Pages">
          <span className="muted" role="status">
            {rowsShown(page, perPage, rows.length, total)}
          </span>
          <button type="button" disabled={page <= 1} onClick={() => navigate({ page: String(page - 1) })}>
            Previous
          </button>
          <button type="button" disabled={page >= pages} onClick={() => navigate({ page: String(page + 1) })}>
            Next
          </button>
        </div>
      )}
    </div>
  );
}
