import pg from 'pg';

/**
 * One statement in its own (implicit) transaction whose rows are wanted before its commit: the statement
 * is sent with a Flush ahead of the Sync that ends the transaction, so PostgreSQL sends the rows and the
 * statement's completion before it commits, and its commit (the WAL flush) overlaps whatever the caller
 * starts with the rows. Everything goes in one write: one round trip in all, against three for BEGIN,
 * the statement and COMMIT. Locks the statement takes are held until that commit.
 *
 * A `first` statement, without parameters, can run ahead of it in the same transaction, also followed by a
 * Flush: its completion comes back as soon as it has run, so what it takes (a lock) is known to be held
 * while the main statement is still running, and until the commit; and the main statement's snapshot is
 * taken after it. A `name` prepares the main statement once per connection.
 *
 * Built on pg's Submittable interface (an object with `submit(connection)` that the client hands the
 * backend's messages for it), which is how pg lets a caller speak the extended protocol its own way.
 */

/** A column of the statement's rows, as its RowDescription names it. */
interface Field {
  name: string;
  dataTypeID: number;
}

/** The protocol steps of pg's connection this module sends, and its socket (corked while they are written). */
type Connection = Pick<pg.Connection, 'parse' | 'bind' | 'describe' | 'execute' | 'flush' | 'sync' | 'close' | 'stream'>;

/**
 * Named statements this module prepared, per connection: 'ready' once a run that parsed it ended without
 * error; 'unsure' after an error, as the Parse may or may not have run (everything after an error up to the
 * Sync is skipped), so the next run closes the name first (closing a name that does not exist is no error).
 */
const prepared = new WeakMap<object, Map<string, 'ready' | 'unsure'>>();

/**
 * A parameter as PostgreSQL's text format has it: text, numbers, booleans, bigints, Dates (as UTC instants,
 * for timestamptz), arrays of those, and JSON objects. Bytes are refused rather than sent as JSON.
 */
function textParameter(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return `{${value.map(arrayElement).join(',')}}`;
  if (value instanceof Date) return value.toISOString();
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) throw new TypeError('rowsBeforeCommit sends no bytes');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const arrayElement = (value: unknown): string => {
  const text = textParameter(value);
  if (text === null) return 'NULL';
  if (Array.isArray(value)) return text;
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
};

class RowsBeforeCommit {
  readonly collected: Record<string, unknown>[] = [];
  onFirst: () => void = () => {};
  onRows: (rows: Record<string, unknown>[]) => void = () => {};
  onError: (err: unknown) => void = () => {};
  onEnd: () => void = () => {};
  private firstPending: boolean;
  private fields: Field[] = [];
  private parsers: ((text: string) => unknown)[] = [];
  private failed: unknown;
  private statements?: Map<string, 'ready' | 'unsure'>;

  constructor(
    private readonly text: string,
    private readonly values: unknown[],
    private readonly first?: string,
    private readonly statementName?: string,
  ) {
    this.firstPending = first !== undefined;
  }

  submit(connection: Connection): Error | void {
    // Written before anything is sent: a value that cannot be is this query's error, and the connection
    // has been sent nothing it would have to end.
    let values: (string | null)[];
    try {
      values = this.values.map(textParameter);
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
    // One write for all the messages.
    connection.stream.cork();
    try {
      this.send(connection, values);
    } finally {
      connection.stream.uncork();
    }
  }

  private send(connection: Connection, values: (string | null)[]): void {
    if (this.first !== undefined) {
      connection.parse({ text: this.first, name: '', types: [] }, false);
      connection.bind({ portal: '', statement: '', values: [] }, false);
      connection.describe({ type: 'P', name: '' }, false);
      connection.execute({ portal: '' }, false);
      connection.flush();
    }
    const name = this.statementName ?? '';
    let state: 'ready' | 'unsure' | undefined;
    if (name) {
      this.statements = prepared.get(connection) ?? new Map();
      prepared.set(connection, this.statements);
      state = this.statements.get(name);
      if (state === 'unsure') connection.close({ type: 'S', name }, false);
      // Counted as unsure until this run ends well: an error on the way leaves it so.
      this.statements.set(name, 'unsure');
    }
    if (state !== 'ready') connection.parse({ text: this.text, name, types: [] }, false);
    connection.bind({ portal: '', statement: name, values }, false);
    connection.describe({ type: 'P', name: '' }, false);
    connection.execute({ portal: '' }, false);
    // The rows and the completion come back before the Sync makes PostgreSQL commit.
    connection.flush();
    connection.sync();
  }

  handleRowDescription(msg: { fields: Field[] }): void {
    this.fields = msg.fields;
    this.parsers = msg.fields.map((f) => pg.types.getTypeParser(f.dataTypeID, 'text'));
  }

  handleDataRow(msg: { fields: (string | null)[] }): void {
    // The first statement's rows are not the caller's.
    if (this.firstPending) return;
    const row: Record<string, unknown> = {};
    msg.fields.forEach((value, i) => {
      const field = this.fields[i]!;
      row[field.name] = value === null ? null : this.parsers[i]!(value);
    });
    this.collected.push(row);
  }

  handleCommandComplete(): void {
    if (this.firstPending) {
      this.firstPending = false;
      this.onFirst();
    } else this.onRows(this.collected);
  }

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  // An error the backend sent (ReadyForQuery still follows), or the connection's end (nothing follows).
  handleError(err: unknown): void {
    if (this.failed !== undefined) return;
    this.failed = err;
    this.onError(err);
  }

  handleReadyForQuery(): void {
    if (this.failed !== undefined) return;
    if (this.statementName) this.statements?.set(this.statementName, 'ready');
    this.onEnd();
  }
}

/**
 * Runs `text` on `client` in a transaction of its own, after `opts.first` if given: `first` resolves once
 * that has run, `rows` once the statement has run (both before the commit), `committed` once the commit
 * is over. Each rejects with the error of any step it waits for; an error before the rows rejects all.
 */
export function rowsBeforeCommit<T>(
  client: pg.PoolClient,
  text: string,
  values: unknown[],
  opts: { first?: string; name?: string } = {},
): { first: Promise<void>; rows: Promise<T[]>; committed: Promise<void> } {
  const query = new RowsBeforeCommit(text, values, opts.first, opts.name);
  const settled = <R>() => {
    let resolve!: (r: R) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<R>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // The outcome is the caller's to await, in its order; none is left unhandled meanwhile.
    promise.catch(() => {});
    return { promise, resolve, reject };
  };
  const first = settled<void>();
  const rows = settled<T[]>();
  const committed = settled<void>();
  if (opts.first === undefined) first.resolve();
  query.onFirst = () => first.resolve();
  query.onRows = (r) => rows.resolve(r as T[]);
  query.onEnd = () => committed.resolve();
  query.onError = (e: unknown) => {
    first.reject(e);
    rows.reject(e);
    committed.reject(e);
  };
  client.query(query);
  return { first: first.promise, rows: rows.promise, committed: committed.promise };
}
