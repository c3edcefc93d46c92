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

export function Pager({
  page,
  shown,
  pageSize,
  total,
  hasNext,
  onPrev,
  onNext,
  noun,
}: {
  page: number;
  shown: number;
  pageSize: number;
  total: number;
  hasNext: boolean;
  onPrev: () => void;
  onNext: () => void;
  noun: string;
}) {
  const from = total === 0 ? 0 : (page - 1) * pageSize + 1;
  const to = (page - 1) * pageSize + shown;
  return (
    <nav className="pager" aria-label={`${noun} pages`}>
      <span className="muted">
        {from}–{to} of {total} {noun}
      </span>
      <span className="pager-buttons">
        <button type="button" onClick={onPrev} disabled={page <= 1}>
          ← Previous
        </button>
        <button type="button" onClick={onNext} disabled={!hasNext}>
          Next →
        </button>
      </span>
    </nav>
  );
}
