-- The order of acceptance, and the provider object an event is about (docs/inbound-webhooks.md, "Order").
ALTER TABLE "inbox_events" ADD COLUMN "seq" BIGSERIAL NOT NULL;
ALTER TABLE "inbox_events" ADD COLUMN "order_key" TEXT;

-- The events of an object still to apply: a batch finds what an event waits behind by this index.
CREATE INDEX "inbox_events_order_idx" ON "inbox_events"("tenant_id", "order_key", "seq")
  WHERE "status" = 'received' AND "order_key" IS NOT NULL;
