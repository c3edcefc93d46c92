import { useRef, useState } from 'react';

/**
 * A secret the service will not show again: selectable, copyable, with the warning next to it and a
 * button to confirm it was stored.
 */
export function SecretOnce({
  label,
  secret,
  onDone,
  children,
}: {
  label: string;
  secret: string;
  onDone: () => void;
  children?: React.ReactNode;
}) {
  const [copied, setCopied] = useState<'yes' | 'manual' | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('yes');
    } catch {
      // Clipboard access needs a secure context; selecting the text lets the user copy by hand.
      input.current?.select();
      setCopied('manual');
    }
  };
  return (
    <div className="secret-once" role="region" aria-label={label}>
      <p className="warning">
        <strong>Copy this now.</strong> It is shown only this once and cannot be retrieved later. Store it in your secret manager; if it is
        lost, rotate to get a new one.
      </p>
      <label className="field">
        <span>{label}</span>
        <span className="secret-row">
          <input
            ref={input}
            readOnly
            value={secret}
            className="mono"
            data-testid="secret-value"
            onFocus={(e) => e.currentTarget.select()}
          />
          <button type="button" onClick={copy}>
            Copy
          </button>
        </span>
      </label>
      <p className="muted" aria-live="polite">
        {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'manual' ? 'Selected: press Ctrl+C (⌘C) to copy.' : ''}
      </p>
      {children}
      <button type="button" className="primary" onClick={onDone}>
        I have stored it
      </button>
    </div>
  );
}
