import type { Db } from '../db/prisma.ts';
import { sealedKeyId, type SecretBox } from './secret-box.ts';

const COLUMNS = {
  inboundSecret: ['secret', 'previousSecret', 'verifyToken'],
  webhookEndpoint: ['secret', 'previousSecret', 'signingKey', 'previousSigningKey'],
} as const;

/**
 * Re-seals, row by row, every stored secret an older key sealed, with the box's current key. Once a
 * run reseals nothing, the old key can be dropped from ENCRYPTION_KEY. Safe to run while the service
 * runs, and to run again.
 */
export async function reencryptSecrets(db: Db, box: SecretBox): Promise<{ resealed: number; rows: number }> {
  let resealed = 0;
  let rows = 0;
  const reseal = (v: string | null) => (v && sealedKeyId(v) !== box.keyId ? (resealed++, box.seal(box.open(v))) : v);

  for (const row of await db.inboundSecret.findMany({ select: { id: true, secret: true, previousSecret: true, verifyToken: true } })) {
    rows++;
    const next = { secret: reseal(row.secret)!, previousSecret: reseal(row.previousSecret), verifyToken: reseal(row.verifyToken) };
    if (COLUMNS.inboundSecret.some((c) => next[c] !== row[c])) {
      // Only if unchanged since read: a rotation meanwhile already sealed with the current key.
      await db.inboundSecret.updateMany({ where: { id: row.id, secret: row.secret }, data: next });
    }
  }
  for (const row of await db.webhookEndpoint.findMany({
    select: { id: true, secret: true, previousSecret: true, signingKey: true, previousSigningKey: true },
  })) {
    rows++;
    const next = {
      secret: reseal(row.secret)!,
      previousSecret: reseal(row.previousSecret),
      signingKey: reseal(row.signingKey),
      previousSigningKey: reseal(row.previousSigningKey),
    };
    if (COLUMNS.webhookEndpoint.some((c) => next[c] !== row[c])) {
      await db.webhookEndpoint.updateMany({ where: { id: row.id, secret: row.secret }, data: next });
    }
  }
  return { resealed, rows };
}
