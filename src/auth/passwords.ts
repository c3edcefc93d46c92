import { hash, verify } from '@node-rs/argon2';

// Argon2id with the library's defaults (19 MiB, 2 passes), the OWASP baseline for a memory-hard KDF.
export const hashPassword = (password: string) => hash(password);

export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

// Verifying against this when the email is unknown keeps both paths equally slow.
let decoy: Promise<string> | undefined;
export const decoyHash = () => (decoy ??= hash('decoy-password-for-unknown-users'));
