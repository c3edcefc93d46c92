// Date-times the service accepts from clients: ISO 8601 with a four-digit year from 0001 to 9999.
// JavaScript dates reach far wider (year 0, -271821, +275760) and PostgreSQL refuses or misreads
// some of those, so everything a client sends is held to this range before it gets that far.

/** 0001-01-01T00:00:00.000Z (Date.UTC reads years below 100 as 19xx, hence the literal). */
export const MIN_DATE_MS = -62_135_596_800_000;
/** 9999-12-31T23:59:59.999Z */
export const MAX_DATE_MS = 253_402_300_799_999;

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?$/i;

const daysIn = (year: number, month: number) => new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0);
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/** The instant an ISO 8601 date-time names, or undefined when it is not one or lies outside years 1-9999. */
export function parseDateTime(value: unknown): Date | undefined {
  if (typeof value !== 'string' || value.length > 40) return undefined;
  const m = ISO_DATE_TIME.exec(value);
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // new Date() rolls 31 February over into March; a date that does not exist is not one.
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  const d = new Date(value);
  const ms = d.getTime();
  return Number.isNaN(ms) || ms < MIN_DATE_MS || ms > MAX_DATE_MS ? undefined : d;
}

/** A calendar day such as 2026-11-22, in years 1-9999. */
export function isCalendarDay(value: unknown): value is string {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && parseDateTime(`${value}T00:00:00Z`) !== undefined;
}
