const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in its canonical 8-4-4-4-12 hexadecimal form, in either case. */
export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);
