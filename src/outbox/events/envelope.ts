/** How many digits a sequence takes in the envelope: every number an int column holds. */
const SEQUENCE_DIGITS = 10;

/**
 * The CloudEvents envelope a delivery stores (its body is `data.payload`), as one SQL expression over the
 * given column or parameter expressions: the relay fans events out with it and a Test delivery is written
 * with it, so both carry the same envelope. An event numbered under a subject also carries CloudEvents'
 * sequence extension: `sequence`, its number as a string that compares in order as text (zero-padded), and
 * `sequencesubject`, the subject it is numbered under, without which the number means nothing.
 */
export const envelopeSql = (e: {
  id: string;
  tenantId: string;
  type: string;
  subject: string;
  time: string;
  payload: string;
  sequenceSubject?: string;
  sequence?: string;
}) =>
  `jsonb_build_object('specversion', '1.0', 'id', ${e.id}, 'source', '/tenants/' || ${e.tenantId}, 'type', ${e.type}, 'subject', ${e.subject},
     'time', to_char(${e.time} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
     'datacontenttype', 'application/json', 'data', jsonb_build_object('payload', ${e.payload}))` +
  (e.sequence && e.sequenceSubject
    ? ` || CASE WHEN ${e.sequence} IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('sequence', lpad(${e.sequence}::text, ${SEQUENCE_DIGITS}, '0'), 'sequencesubject', ${e.sequenceSubject}) END`
    : '');
