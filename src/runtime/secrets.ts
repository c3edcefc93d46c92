import type { Config } from '../config.ts';
import { loadLocalSecrets } from '../db/local-secrets.ts';

/** The session signing secret: configured, or (outside production) generated once under the data directory. */
export function sessionSecret(config: Config): string {
  return config.sessions.secret ?? loadLocalSecrets(config.dataDir).sessionSecret;
}
