import type { ReactNode } from 'react';
import type { CombinedError } from 'urql';
import { toProblem } from '../lib/errors.ts';

export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}…
    </div>
  );
}

const NEXT_STEP: Record<string, string> = {
  network: 'Check that the service is running, then retry.',
  forbidden: 'Ask an owner or admin of your workspace if you need this.',
  not_found: 'It may have been deleted, or the link is for another workspace.',
  rate_limited: 'Your workspace made many requests in the last minute. Wait a moment, then retry.',
};

export function ErrorState({ error, retry }: { error: CombinedError; retry?: () => void }) {
  const p = toProblem(error);
  return (
    <div className="state state-error" role="alert">
      <p className="state-title">Something went wrong</p>
      <p>{p.message}</p>
      {NEXT_STEP[p.code] ? <p className="muted">{NEXT_STEP[p.code]}</p> : null}
      {retry ? (
        <button type="button" onClick={retry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state-empty">
      <p className="state-title">{title}</p>
      {children}
    </div>
  );
}

/** A form's outcome: the API's message and its field errors, read out by screen readers. */
export function FormError({ error }: { error: CombinedError | null | undefined }) {
  if (!error) return null;
  const p = toProblem(error);
  return (
    <div className="form-error" role="alert">
      <p>{p.message}</p>
      {p.fieldErrors.length ? (
        <ul>
          {p.fieldErrors.map((e) => (
            <li key={`${e.path}:${e.message}`}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
