import { useCallback, useState } from 'react';

/** Keyset paging: the cursors of the pages before are kept so "Previous" goes back exactly. */
export function useCursorStack(resetKey: string) {
  const [state, setState] = useState<{ key: string; stack: (string | null)[] }>({ key: resetKey, stack: [null] });
  const stack = state.key === resetKey ? state.stack : [null];
  const next = useCallback(
    (cursor: string | null | undefined) => {
      if (cursor) setState({ key: resetKey, stack: [...stack, cursor] });
    },
    [resetKey, stack],
  );
  const prev = useCallback(() => setState({ key: resetKey, stack: stack.slice(0, -1) }), [resetKey, stack]);
  return { after: stack[stack.length - 1], page: stack.length, next, prev };
}

interface PagedConnection {
  nodes: readonly unknown[];
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor?: string | null };
}

/** "21–40 of 93 customers" with Previous and Next, for a connection read with `useCursorStack`. */
export function Pager({
  pages,
  connection,
  pageSize,
  noun,
}: {
  pages: ReturnType<typeof useCursorStack>;
  connection: PagedConnection;
  pageSize: number;
  noun: string;
}) {
  const total = connection.totalCount;
  const from = total === 0 ? 0 : (pages.page - 1) * pageSize + 1;
  const to = (pages.page - 1) * pageSize + connection.nodes.length;
  return (
    <nav className="pager" aria-label={`${noun} pages`}>
      <span className="muted">
        {from}–{to} of {total} {noun}
      </span>
      <span className="pager-buttons">
        <button type="button" onClick={pages.prev} disabled={pages.page <= 1}>
          ← Previous
        </button>
        <button type="button" onClick={() => pages.next(connection.pageInfo.endCursor)} disabled={!connection.pageInfo.hasNextPage}>
          Next →
        </button>
      </span>
    </nav>
  );
}
