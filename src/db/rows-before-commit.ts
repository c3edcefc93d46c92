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
 */
class RowsBeforeCommit extends pg.Query {
  readonly collected: Record<string, unknown>[] = [];
  onFirst: () => void = () => {};
  onRows: (rows: Record<string, unknown>[]) => void = () => {};
  private firstPending: boolean;
  private sentParse = false;
  private failed = false;

  constructor(
    text: string,
    values: unknown[],
    private readonly first?: string,
    name?: string,
  ) {
    super({ text, values, name });
    this.firstPending = first !== undefined;
    // The first statement's rows are not the caller's.
    this.on('row', (row: Record<string, unknown>) => this.firstPending || this.collected.push(row));
  }

  // pg's own step that sends Parse, Bind and Describe, then Execute; the first statement goes ahead of them.
  prepare(connection: {
    parse(o: object): void;
    bind(o: object): void;
    describe(o: object): void;
    execute(o: object): void;
    flush(): void;
    close(o: object): void;
  }) {
    const self = this as unknown as { name?: string; hasBeenParsed(c: unknown): boolean };
    this.sentParse = Boolean(self.name) && !self.hasBeenParsed(connection);
    if (this.first !== undefined) {
      connection.parse({ text: this.first, name: '' });
      connection.bind({ portal: '', statement: '', values: [] });
      connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '' });
      connection.flush();
      // pg counts any ParseComplete of this query as the named statement's, the first statement's too; if
      // the named Parse is then skipped (an error before it), the name is forgotten again (handleError),
      // and the next Parse of it closes whatever may exist under it first, which is never an error.
      if (this.sentParse) connection.close({ type: 'S', name: self.name });
    }
    (pg.Query.prototype as unknown as { prepare(c: unknown): void }).prepare.call(this, connection);
  }

  // pg's own step that sends Execute and then Sync; here Execute, Flush, then Sync.
  _getRows(connection: { execute(o: object): void; flush(): void; sync(): void }, rows: number | undefined) {
    connection.execute({ portal: (this as unknown as { portal: string }).portal, rows });
    connection.flush();
    connection.sync();
  }

  handleError(err: unknown, connection: { parsedStatements: Record<string, string> }) {
    this.failed = true;
    this.forgetName(connection);
    (pg.Query.prototype as unknown as { handleError(e: unknown, c: unknown): void }).handleError.call(this, err, connection);
  }

  // An error raised here before sending (a value pg cannot serialise) comes before the server's answers,
  // whose ParseComplete would count the name as prepared again: forgotten once more at the end.
  handleReadyForQuery(connection: { parsedStatements: Record<string, string> }) {
    if (this.failed) this.forgetName(connection);
    (pg.Query.prototype as unknown as { handleReadyForQuery(c: unknown): void }).handleReadyForQuery.call(this, connection);
  }

  private forgetName(connection: { parsedStatements: Record<string, string> }) {
    const name = (this as unknown as { name?: string }).name;
    if (this.sentParse && this.first !== undefined && name) delete connection.parsedStatements[name];
  }

  handleCommandComplete(msg: unknown, connection: unknown) {
    (pg.Query.prototype as unknown as { handleCommandComplete(m: unknown, c: unknown): void }).handleCommandComplete.call(
      this,
      msg,
      connection,
    );
    if (this.firstPending) {
      this.firstPending = false;
      this.onFirst();
    } else this.onRows(this.collected);
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
  query.on('end', () => committed.resolve());
  query.on('error', (e: unknown) => {
    first.reject(e);
    rows.reject(e);
    committed.reject(e);
  });
  client.query(query as unknown as pg.QueryConfig);
  return { first: first.promise, rows: rows.promise, committed: committed.promise };
}
