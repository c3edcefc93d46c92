/**
 * The CloudEvents envelope a delivery stores (its body is `data.payload`), as one SQL expression over the
 * given column or parameter expressions: the relay fans events out with it and a Test delivery is written
 * with it, so both carry the same envelope.
 */
export const envelopeSql = (e: { id: string; tenantId: string; type: string; subject: string; time: string; payload: string }) =>
  `jsonb_build_object('specversion', '1.0', 'id', ${e.id}, 'source', '/tenants/' || ${e.tenantId}, 'type', ${e.type}, 'subject', ${e.subject},
     'time', to_char(${e.time} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
     'datacontenttype', 'application/json', 'data', jsonb_build_object('payload', ${e.payload}))`;
