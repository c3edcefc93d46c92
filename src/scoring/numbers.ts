export const round = (n: number, digits = 0) => Math.round(n * 10 ** digits) / 10 ** digits;
export const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n));
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
