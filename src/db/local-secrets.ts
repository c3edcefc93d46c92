import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface LocalSecrets {
  sessionSecret: string;
  encryptionKey: string;
  postgresPassword: string;
}

// For a developer's machine only: secrets that production passes in through the environment are
// generated once and kept under the data directory, so restarts keep sessions and stored secrets valid.
export function loadLocalSecrets(dataDir: string): LocalSecrets {
  const file = join(dataDir, 'local-secrets.json');
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LocalSecrets;
  } catch {
    const secrets: LocalSecrets = {
      sessionSecret: randomBytes(32).toString('base64url'),
      encryptionKey: randomBytes(32).toString('base64'),
      postgresPassword: randomBytes(18).toString('base64url'),
    };
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600, flag: 'wx' });
    return secrets;
  }
}
