/** Discord signs with the application's key pair: the tenant's "secret" is its public key, 64 hex characters. */
export const isDiscordPublicKey = (hex: string) => /^[0-9a-fA-F]{64}$/.test(hex);
