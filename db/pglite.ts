import { PGlite, type QueryOptions, type Results, messages as pgMessages, parse, protocol } from "@electric-sql/pglite";

type BackendMessage = Parameters<typeof parse.parseResults>[0][number];
type Parsers = PGlite["parsers"];
type QueryParsers = NonNullable<QueryOptions["parsers"]>;

/** A statement parsed once inside the embedded backend, run by name from then on. */
interface PreparedStatement {
  name: string;
  /** Type oids of its parameters ($1, $2, …), as the backend inferred them. */
  parameterTypes: number[];
  /** Its RowDescription (none for statements that return no rows). */
  rowDescription: BackendMessage | null;
}

/** The shared buffers of a brief PGlite (PreparingPGlite.open). */
const BRIEF_SHARED_BUFFERS = "16MB";

/** Statements kept parsed; the least recently used is closed beyond this. */
const MAX_PREPARED_STATEMENTS = 500;

/**
 * Errors after which a statement must be parsed again: the backend dropped its plan because a
 * table it reads changed shape, or no longer knows the name. postgres.js retries on the same two.
 */
const REPREPARE_ROUTINES = new Set(["RevalidateCachedQuery", "FetchPreparedStatement"]);

/**
 * PGlite whose top-level `query()` runs every statement text as a named prepared statement,
 * parsed and planned once, as postgres.js does on a server connection.
 *
 * PGlite's own `query()` makes six calls into the WebAssembly backend for each query (Parse,
 * Describe, Bind, Describe, Execute, Sync, one message each) and parses and plans the text
 * every time. Here a known text costs one call: Bind, Execute and Sync in one message, the row
 * description kept from the statement's preparation. Everything else is PGlite's own: the same
 * locks (no query runs inside another caller's transaction), serializers, result parsing,
 * errors, notices and notifications, and `syncToFs` after each query. Queries inside
 * `transaction()` (drizzle's `db.transaction`) keep PGlite's path unchanged.
 */
export class PreparingPGlite extends PGlite {
  /** Statement text → its prepared statement, least recently used first (a Map keeps order). */
  readonly #statements = new Map<string, PreparedStatement>();
  #nextStatementNumber = 1;
  /**
   * PGlite's parsers merged with a query's own, once per object (drizzle passes the same one for
   * a query each time). PGlite's own are complete once it is ready; after `refreshArrayTypes()`
   * (never called here) a merged copy would miss the new array types.
   */
  readonly #mergedParsers = new WeakMap<QueryParsers, Parsers>();

  /**
   * `brief`: for a process that has the database open for seconds (a command of the command line,
   * a test's own connection). Postgres's 128 MB of shared buffers are handed to the embedded
   * backend zeroed, which costs every open about 0.6 s of CPU (1.2–1.35 s against 0.6–0.7 with
   * BRIEF_SHARED_BUFFERS, measured on this project's machine); such a process never reads enough
   * pages to use them. A server keeps the default for its long life.
   */
  static async open(dataDir: string, { brief = false } = {}): Promise<PreparingPGlite> {
    const startParams = brief ? [...PGlite.defaultStartParams, "-c", `shared_buffers=${BRIEF_SHARED_BUFFERS}`] : undefined;
    const pglite = new PreparingPGlite({ dataDir, startParams });
    await pglite.waitReady;
    return pglite;
  }

  override async query<T>(text: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> {
    // COPY from a blob and caller-given parameter types keep PGlite's own path.
    if (options?.blob || options?.paramTypes) return super.query<T>(text, params, options);
    await this._checkReady();
    return this._runExclusiveTransaction(() =>
      this._runExclusiveQuery(async () => {
        try {
          return await this.#runPrepared<T>(text, params, options);
        } catch (error) {
          if (!REPREPARE_ROUTINES.has((error as { routine?: string }).routine ?? "")) throw error;
          await this.#close(text);
          return await this.#runPrepared<T>(text, params, options);
        }
      }),
    );
  }

  /** Closes every prepared statement, e.g. after migrations changed the tables they read. */
  async forgetPreparedStatements(): Promise<void> {
    await this._checkReady();
    await this._runExclusiveTransaction(() =>
      this._runExclusiveQuery(async () => {
        this.#statements.clear();
        await this.#send([protocol.serialize.query("DEALLOCATE ALL")]);
      }),
    );
  }

  async #runPrepared<T>(text: string, params: unknown[], options: QueryOptions | undefined): Promise<Results<T>> {
    const statement = await this.#statement(text, options);
    const values = params.map((value, index) => {
      if (value === null || value === undefined) return null;
      const oid = statement.parameterTypes[index];
      const serialize = options?.serializers?.[oid] ?? this.serializers[oid];
      return serialize ? serialize(value) : String(value);
    });
    let messages: BackendMessage[];
    try {
      messages = await this.#send(
        [protocol.serialize.bind({ statement: statement.name, values }), protocol.serialize.execute({}), protocol.serialize.sync()],
        options,
      );
    } catch (error) {
      throw describedError(error, text, params, options);
    }
    await this.syncToFs();
    // What a COPY … TO '/dev/blob' wrote, attached to the result as PGlite's own query() does.
    const blob = await this._getWrittenBlob();
    if (statement.rowDescription) messages.unshift(statement.rowDescription);
    const parsers = options?.parsers ? this.#parsersWith(options.parsers) : this.parsers;
    return parse.parseResults(messages, parsers, { rowMode: options?.rowMode }, blob)[0] as Results<T>;
  }

  /** The prepared statement of `text`, parsed now if it is new (closing the least used one beyond the limit). */
  async #statement(text: string, options: QueryOptions | undefined): Promise<PreparedStatement> {
    const known = this.#statements.get(text);
    if (known) {
      this.#statements.delete(text);
      this.#statements.set(text, known);
      return known;
    }
    if (this.#statements.size >= MAX_PREPARED_STATEMENTS) await this.#close(this.#statements.keys().next().value!);
    const name = `panel_${this.#nextStatementNumber++}`;
    let messages: BackendMessage[];
    try {
      messages = await this.#send(
        [protocol.serialize.parse({ name, text }), protocol.serialize.describe({ type: "S", name }), protocol.serialize.sync()],
        options,
      );
    } catch (error) {
      throw describedError(error, text, [], options);
    }
    const statement: PreparedStatement = {
      name,
      parameterTypes: parse.parseDescribeStatementResults(messages),
      rowDescription: messages.find((message) => message.name === "rowDescription") ?? null,
    };
    this.#statements.set(text, statement);
    return statement;
  }

  /** Forgets the statement of `text` and closes it in the backend (closing one it no longer knows is no error). */
  async #close(text: string): Promise<void> {
    const statement = this.#statements.get(text);
    if (!statement) return;
    this.#statements.delete(text);
    await this.#send([protocol.serialize.close({ type: "S", name: statement.name }), protocol.serialize.sync()]);
  }

  /** One call into the backend with these protocol messages, its answers parsed (errors thrown). */
  #send(messages: Uint8Array[], options?: QueryOptions): Promise<BackendMessage[]> {
    return this.execProtocolStream(concatenate(messages), { syncToFs: false, onNotice: options?.onNotice });
  }

  #parsersWith(own: QueryParsers): Parsers {
    let merged = this.#mergedParsers.get(own);
    if (!merged) {
      merged = { ...this.parsers, ...own };
      this.#mergedParsers.set(own, merged);
    }
    return merged;
  }
}

function concatenate(parts: Uint8Array[]): Uint8Array {
  const whole = new Uint8Array(parts.reduce((length, part) => length + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    whole.set(part, offset);
    offset += part.byteLength;
  }
  return whole;
}

/** The statement and its parameters on a database error, as PGlite's own query() adds them. */
function describedError(error: unknown, query: string, params: unknown[], queryOptions: QueryOptions | undefined): unknown {
  if (error instanceof pgMessages.DatabaseError) Object.assign(error, { query, params, queryOptions });
  return error;
}
