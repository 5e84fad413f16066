import type { PgSelect } from "drizzle-orm/pg-core";
import { z } from "zod";

// The query of every admin list (components/data-table.tsx keeps it in the URL): a search string,
// a page and a page size, searched and paged by the database.

export const listQuerySchema = z.object({
  search: z.string().trim().max(200).default(""),
  page: z.coerce.number().int().min(1).default(1),
  // 0 = All.
  per_page: z.coerce
    .number()
    .int()
    .refine((size) => [0, 5, 10, 25, 50].includes(size), "must be 5, 10, 25, 50 or 0 (all)")
    .default(10),
});
export type ListQuery = z.input<typeof listQuerySchema>;
export type ListPage<Row> = { rows: Row[]; total: number };

/**
 * A page's query from the URL; a malformed one falls back to the first page, unfiltered. `name`:
 * the list's, on a page with more than one (its keys are `<name>_search`…, components/data-table.tsx).
 */
export function listQueryFromUrl(searchParams: Record<string, string | string[] | undefined>, name?: string) {
  const own = name ? Object.fromEntries(["search", "page", "per_page"].map((param) => [param, searchParams[`${name}_${param}`]])) : searchParams;
  const parsed = listQuerySchema.safeParse(own);
  return parsed.success ? parsed.data : listQuerySchema.parse({});
}

/**
 * A list's query as the URL's query string ("page=2&per_page=5"), defaults left out: an edit page
 * links back to the list as the admin left it.
 */
export function listQueryString(query: z.output<typeof listQuerySchema>): string {
  const defaults = listQuerySchema.parse({});
  const params = new URLSearchParams();
  if (query.search !== defaults.search) params.set("search", query.search);
  if (query.page !== defaults.page) params.set("page", String(query.page));
  if (query.per_page !== defaults.per_page) params.set("per_page", String(query.per_page));
  return params.toString();
}

/** A LIKE/ILIKE pattern matching `search` anywhere, its wildcards taken literally. */
export const containsPattern = (search: string) => `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Applies page and page size (0 = all) to a select made with `.$dynamic()`. */
export function paged<Select extends PgSelect>(select: Select, { page, per_page: perPage }: { page: number; per_page: number }) {
  return perPage === 0 ? select : select.limit(perPage).offset((page - 1) * perPage);
}

/**
 * The same search and paging over a list read whole (an account's domains, records, jobs: tens,
 * not thousands): rows whose `text` contains the search, case-insensitively, and the page asked for.
 */
export function pageOfList<Row>(rows: Row[], query: z.output<typeof listQuerySchema>, text: (row: Row) => string): ListPage<Row> {
  const search = query.search.toLowerCase();
  const found = search ? rows.filter((row) => text(row).toLowerCase().includes(search)) : rows;
  const start = (query.page - 1) * query.per_page;
  return { rows: query.per_page === 0 ? found : found.slice(start, start + query.per_page), total: found.length };
}
