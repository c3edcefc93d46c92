-- AlterTable
ALTER TABLE "inbox_events" ADD COLUMN     "body_sha256" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "inbox_events_tenant_id_provider_body_sha256_key" ON "inbox_events"("tenant_id", "provider", "body_sha256") WHERE "body_sha256" IS NOT NULL;
