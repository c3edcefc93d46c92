import { useState, type FormEvent, type ReactNode } from 'react';
import type { CombinedError } from 'urql';
import { FormError } from './States.tsx';

/** The form of a dialog for what cannot be taken back lightly: the action waits until a name is typed. */
export function TypeToConfirm({
  expected,
  label,
  action,
  busy,
  error,
  onConfirm,
  onCancel,
  children,
}: {
  expected: string;
  label: string;
  action: string;
  busy: boolean;
  error: CombinedError | undefined;
  onConfirm: (typed: string) => void;
  onCancel: () => void;
  children: ReactNode;
}) {
  const [typed, setTyped] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onConfirm(typed);
  };
  return (
    <form className="stack" onSubmit={submit}>
      {children}
      <label className="field">
        <span>{label}</span>
        <input value={typed} onChange={(e) => setTyped(e.target.value)} autoFocus autoComplete="off" />
      </label>
      <FormError error={error} />
      <div className="toolbar">
        <button type="submit" className="danger" disabled={typed !== expected || busy}>
          {action}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
