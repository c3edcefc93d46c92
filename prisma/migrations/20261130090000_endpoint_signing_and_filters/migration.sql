-- Standard Webhooks signatures, opt-in per endpoint (docs/receiving-webhooks.md): the scheme an endpoint's
-- deliveries are signed with, and its Ed25519 key pair (the private key sealed like the secret), the pair
-- rotated out signing beside the new one while the previous secret does. Existing endpoints keep `v0`.
-- Payload filters per event type, kept as given and compiled to SQL/JSON path predicates.

-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN     "filter_paths" JSONB,
ADD COLUMN     "filters" JSONB,
ADD COLUMN     "previous_public_key" TEXT,
ADD COLUMN     "previous_signing_key" TEXT,
ADD COLUMN     "public_key" TEXT,
ADD COLUMN     "signature_scheme" TEXT NOT NULL DEFAULT 'v0',
ADD COLUMN     "signing_key" TEXT;
