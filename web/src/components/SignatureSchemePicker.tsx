/** How an endpoint's deliveries are signed (docs/receiving-webhooks.md). */
export const SIGNATURE_SCHEME_LABELS: Record<string, string> = {
  v0: 'X-Webhook-Signature (v0=, hex HMAC)',
  standard: 'Standard Webhooks (webhook-signature: v1 HMAC and v1a Ed25519)',
};

export function SignatureSchemePicker({ value, onChange }: { value: string; onChange: (scheme: string) => void }) {
  return (
    <label className="field">
      <span>Signature headers</span>
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        {Object.entries(SIGNATURE_SCHEME_LABELS).map(([scheme, label]) => (
          <option key={scheme} value={scheme}>
            {label}
          </option>
        ))}
      </select>
    </label>
  );
}
