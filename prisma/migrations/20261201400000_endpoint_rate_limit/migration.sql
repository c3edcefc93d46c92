-- A per-endpoint rate limit set by the tenant, honoured by every worker process through one shared
-- budget row per limited endpoint: the time its next send slot is free. A delivery keeps the slot it was
-- given until its attempt is recorded (src/outbox/sender/delivery-store.ts).

-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN     "rate_limit_per_second" DOUBLE PRECISION;

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "send_slot_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "webhook_endpoint_pacing" (
    "endpoint_id" UUID NOT NULL,
    "next_slot_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "webhook_endpoint_pacing_pkey" PRIMARY KEY ("endpoint_id")
);

-- AddForeignKey
ALTER TABLE "webhook_endpoint_pacing" ADD CONSTRAINT "webhook_endpoint_pacing_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;
