// The subject an outbound event is numbered under (docs/receiving-webhooks.md, "Order and sequence
// numbers"), as the X-Webhook-Sequence-Subject header, the delivery log and the catch-up read write it:
// `<kind>:<id>`. The id is our UUID in lower case, but for a payment that names neither an invoice nor a
// customer, whose id is the provider's, percent-encoded as a URI component so that any id is a valid header
// value. One format, written and read only here.

export const SEQUENCE_SUBJECT_KINDS = ['customer', 'invoice', 'subscription', 'endpoint', 'payment', 'integration'] as const;
export type SequenceSubjectKind = (typeof SEQUENCE_SUBJECT_KINDS)[number];

/**
 * A subject as text: `customer:<uuid>`, `invoice:<uuid>`, `subscription:<uuid>`, `endpoint:<uuid>`,
 * `payment:<encoded id>` or `integration:<provider>`.
 */
export type SequenceSubject = `${SequenceSubjectKind}:${string}`;

/** The longest subject a reader may name; a provider's payment id is far shorter. */
export const MAX_SEQUENCE_SUBJECT_LENGTH = 512;

/** The form of a subject, also the REST parameter's pattern; a UUID in upper case is read in lower case. */
export const SEQUENCE_SUBJECT_PATTERN =
  "^((customer|invoice|subscription|endpoint):[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|payment:[A-Za-z0-9_.!~*'()%-]+|integration:[a-z_]{1,32})$";
const PATTERN = new RegExp(SEQUENCE_SUBJECT_PATTERN);

export const SEQUENCE_SUBJECT_EXAMPLE: SequenceSubject = 'customer:0b8e3f1a-5c2d-4e6f-8a9b-1c2d3e4f5a6b';

/** A subject of our own id, or of a provider's name for an integration. */
export function sequenceSubject(kind: Exclude<SequenceSubjectKind, 'payment'>, id: string): SequenceSubject;
export function sequenceSubject(kind: 'payment', providerId: string): SequenceSubject;
export function sequenceSubject(kind: SequenceSubjectKind, id: string): SequenceSubject {
  return kind === 'payment' ? `payment:${encodeURIComponent(id)}` : `${kind}:${id.toLowerCase()}`;
}

/** A subject as a reader wrote it, in the form events are numbered under; null when it is not one. */
export function parseSequenceSubject(text: string): SequenceSubject | null {
  if (text.length > MAX_SEQUENCE_SUBJECT_LENGTH || !PATTERN.test(text)) return null;
  const colon = text.indexOf(':');
  const kind = text.slice(0, colon) as SequenceSubjectKind;
  const id = text.slice(colon + 1);
  if (kind === 'payment') {
    // Stored as encodeURIComponent wrote it: an id that decodes and encodes back to itself.
    try {
      return encodeURIComponent(decodeURIComponent(id)) === id ? (text as SequenceSubject) : null;
    } catch {
      return null;
    }
  }
  // The pattern has checked the UUID's or the provider's form.
  return sequenceSubject(kind, id);
}
