import type { Queryable } from "./client";

/**
 * A hot read built once per database handle and run as a prepared statement (its variables as
 * `sql.placeholder(name)`): drizzle no longer rebuilds the SQL on every call, and postgres.js
 * sends it as a named statement the server parses and plans once per connection (drizzle sends
 * its other queries unnamed, parsed each time). Inside a transaction it is built for that
 * transaction, whose handle is new each time: no gain there, and no harm.
 *
 *   const byAccount = preparedQuery((db) => db.select().from(t).where(eq(t.accountId, sql.placeholder("accountId"))).prepare("t_by_account"));
 *   const rows = await byAccount(db).execute({ accountId });
 */
export function preparedQuery<Query>(build: (db: Queryable) => Query): (db: Queryable) => Query {
  const byHandle = new WeakMap<Queryable, Query>();
  return (db) => {
    let query = byHandle.get(db);
    if (!query) {
      query = build(db);
      byHandle.set(db, query);
    }
    return query;
  };
}
