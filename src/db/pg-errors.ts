// PostgreSQL's SQLSTATE codes that the services answer in their own words, named once.
export const PG = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  deadlockDetected: '40P01',
  serializationFailure: '40001',
  lockNotAvailable: '55P03',
} as const;

/** The SQLSTATE of a database error, or undefined for anything else. */
export const pgCode = (e: unknown): string | undefined => {
  const code = (e as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
};
