import { sealedKeyId, type SecretBox } from './secret-box.ts';

/** Re-seals one stored secret with the box's current key, counting those an older key had sealed. */
export interface Resealer {
  reseal(sealed: string | null): string | null;
  readonly resealed: number;
}

/**
 * A resealer for one run over every table that holds secrets (each table's owner walks its rows with it).
 * Once a run reseals nothing, the old key can be dropped from ENCRYPTION_KEY.
 */
export function createResealer(box: SecretBox): Resealer {
  let resealed = 0;
  return {
    reseal: (v) => (v && sealedKeyId(v) !== box.keyId ? (resealed++, box.seal(box.open(v))) : v),
    get resealed() {
      return resealed;
    },
  };
}
