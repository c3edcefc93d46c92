import pg from 'pg';

/**
 * One statement in its own (implicit) transaction whose rows are wanted before its commit: the statement
 * is sent with a Flush ahead of the Sync that ends the transaction, so PostgreSQL sends the rows and the
 * statement's completion before it commits, and its commit (the WAL flush) overlaps whatever the caller
 * starts with the rows. Everything goes in one write: one round trip in all, against three for BEGIN,
 * the statement and COMMIT. Locks the statement takes are held until that commit.
 */
class RowsBeforeCommit extends pg.Query {
  readonly collected: Record<string, unknown>[] = [];
  onRows: (rows: Record<string, unknown>[]) => void = () => {};

  constructor(text: string, values: unknown[]) {
    super({ text, values });
    this.on('row', (row: Record<string, unknown>) => this.collected.push(row));
  }

  // pg's own step that sends Execute and then Sync; here Execute, Flush, then Sync.
  _getRows(connection: { execute(o: object): void; flush(): void; sync(): void }, rows: number | undefined) {
    connection.execute({ portal: (this as unknown as { portal: string }).portal, rows });
    connection.flush();
    connection.sync();
  }

  handleCommandComplete(msg: unknown, connection: unknown) {
    (pg.Query.prototype as unknown as { handleCommandComplete(m: unknown, c: unknown): void }).handleCommandComplete.call(
      this,
      msg,
      connection,
    );
    this.onRows(this.collected);
  }
}

/**
 * Runs `text` on `client` in a transaction of its own: `rows` resolves once the statement has run (before
 * its commit), `committed` once the commit is over. Either rejects with the statement's or the commit's
 * error; an error before the rows rejects both.
 */
export function rowsBeforeCommit<T>(
  client: pg.PoolClient,
  text: string,
  values: unknown[],
): { rows: Promise<T[]>; committed: Promise<void> } {
  const query = new RowsBeforeCommit(text, values);
  let gotRows!: (rows: T[]) => void;
  let failedRows!: (e: unknown) => void;
  const rows = new Promise<T[]>((resolve, reject) => {
    gotRows = resolve;
    failedRows = reject;
  });
  query.onRows = (r) => gotRows(r as T[]);
  const committed = new Promise<void>((resolve, reject) => {
    query.on('end', () => resolve());
    query.on('error', (e: unknown) => {
      failedRows(e);
      reject(e);
    });
  });
  // The commit's outcome is the caller's to await; the rows' is settled (and awaited) first.
  committed.catch(() => {});
  rows.catch(() => {});
  client.query(query as unknown as pg.QueryConfig);
  return { rows, committed };
}
