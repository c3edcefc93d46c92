-- Outbound events numbered per subject (docs/receiving-webhooks.md, "Order and sequence numbers"): each
-- event carries its sequence subject (the customer, or the invoice for invoice and payment events) and its
-- number among the tenant's events of that subject, given from a counter row in the transaction that writes
-- the event, so a rolled-back transaction gives its numbers back and none is skipped.

-- AlterTable
ALTER TABLE "outbox_events" ADD COLUMN     "sequence" INTEGER,
ADD COLUMN     "sequence_subject" TEXT;

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN     "sequence" INTEGER,
ADD COLUMN     "sequence_subject" TEXT;

-- AlterTable
ALTER TABLE "webhook_endpoints" ADD COLUMN     "ordered" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "outbox_sequences" (
    "tenant_id" UUID NOT NULL,
    "subject" TEXT NOT NULL,
    "last_sequence" INTEGER NOT NULL,

    CONSTRAINT "outbox_sequences_pkey" PRIMARY KEY ("tenant_id","subject")
);

-- The events already written, numbered as enqueueEvents would have (src/outbox/events/registry.ts names each
-- type's subject), in the order they were written. Deliveries take their event's number.
WITH subject AS (
  SELECT "id", "tenant_id", "created_at",
    CASE
      WHEN "type" LIKE 'invoice.%' THEN 'invoice:' || ("payload"->>'invoice_id')
      WHEN "type" LIKE 'payment.%' THEN COALESCE('invoice:' || ("payload"->>'invoice_id'), 'customer:' || ("payload"->>'customer_id'),
                                                'payment:' || ("payload"->>'payment_id'))
      WHEN "type" = 'subscription.trial_extended' THEN COALESCE('customer:' || ("payload"->>'customer_id'),
                                                               'subscription:' || ("payload"->>'subscription_id'))
      WHEN "type" IN ('customer.created', 'customer.health_changed', 'customer.deleted') THEN 'customer:' || ("payload"->>'id')
      WHEN "type" IN ('churn_prediction.updated', 'alert.created', 'alert.resolved') THEN 'customer:' || ("payload"->>'customer_id')
      WHEN "type" = 'endpoint.disabled' THEN 'endpoint:' || ("payload"->>'id')
    END AS "s"
  FROM "outbox_events"),
numbered AS (
  SELECT "id", "s", row_number() OVER (PARTITION BY "tenant_id", "s" ORDER BY "created_at", "id") AS "n"
  FROM subject WHERE "s" IS NOT NULL)
UPDATE "outbox_events" o SET "sequence_subject" = numbered."s", "sequence" = numbered."n"
FROM numbered WHERE o."id" = numbered."id";

INSERT INTO "outbox_sequences" ("tenant_id", "subject", "last_sequence")
SELECT "tenant_id", "sequence_subject", max("sequence") FROM "outbox_events" WHERE "sequence_subject" IS NOT NULL
GROUP BY "tenant_id", "sequence_subject";

UPDATE "webhook_deliveries" d SET "sequence_subject" = o."sequence_subject", "sequence" = o."sequence"
FROM "outbox_events" o WHERE o."id" = d."outbox_event_id" AND o."sequence" IS NOT NULL;

-- CreateIndex
CREATE UNIQUE INDEX "outbox_events_tenant_id_sequence_subject_sequence_key" ON "outbox_events"("tenant_id", "sequence_subject", "sequence");

-- CreateIndex: partial (see the schema), so the ordered claim's look at events not yet relayed stays cheap.
CREATE INDEX "outbox_events_undispatched_sequence_idx" ON "outbox_events"("tenant_id", "sequence_subject", "sequence")
  WHERE "dispatched_at" IS NULL;

-- CreateIndex: partial (see the schema), so the ordered claim's look at earlier deliveries reads pending ones only.
CREATE INDEX "webhook_deliveries_pending_sequence_idx" ON "webhook_deliveries"("endpoint_id", "sequence_subject", "sequence")
  WHERE "status" = 'pending';

-- AddForeignKey
ALTER TABLE "outbox_sequences" ADD CONSTRAINT "outbox_sequences_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
