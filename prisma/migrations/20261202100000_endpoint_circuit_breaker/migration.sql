-- A circuit breaker per webhook endpoint, shared by every worker process, and per-endpoint delivery figures
-- (src/outbox/sender/circuit-breaker.ts, delivery-store.ts; docs/receiving-webhooks.md, "Circuit breaker").
--
-- Safe while workers of the earlier release still run: they neither hold deliveries nor read the breaker, so
-- until they are rolled an open endpoint may still get their attempts, and what they record is counted too.

-- CreateEnum
CREATE TYPE "CircuitState" AS ENUM ('closed', 'open', 'half_open');

-- CreateTable
CREATE TABLE "webhook_endpoint_circuits" (
    "endpoint_id" UUID NOT NULL,
    "state" "CircuitState" NOT NULL DEFAULT 'closed',
    "window_started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "window_attempts" INTEGER NOT NULL DEFAULT 0,
    "window_failures" INTEGER NOT NULL DEFAULT 0,
    "previous_attempts" INTEGER NOT NULL DEFAULT 0,
    "previous_failures" INTEGER NOT NULL DEFAULT 0,
    "opened_at" TIMESTAMPTZ(3),
    "openings" INTEGER NOT NULL DEFAULT 0,
    "next_probe_at" TIMESTAMPTZ(3),
    "probe_delivery_id" UUID,
    "probe_until" TIMESTAMPTZ(3),
    "release_pending" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "webhook_endpoint_circuits_pkey" PRIMARY KEY ("endpoint_id")
);

-- CreateIndex: the worker's pass reads only the circuits that are not closed or still have deliveries to release.
CREATE INDEX "webhook_endpoint_circuits_attention_idx" ON "webhook_endpoint_circuits"("endpoint_id")
  WHERE "state" <> 'closed' OR "release_pending";

-- AddForeignKey
ALTER TABLE "webhook_endpoint_circuits" ADD CONSTRAINT "webhook_endpoint_circuits_endpoint_id_fkey" FOREIGN KEY ("endpoint_id") REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every endpoint gets its circuit row with it, whatever inserts the endpoint, so that the deliverer only ever
-- updates one: inserting it beside a delivery would take a key-share lock on the endpoint's row after the
-- deliveries, which endpoint removal takes the other way round (docs/concurrency.md).
CREATE FUNCTION "webhook_endpoints_circuit"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_endpoint_circuits (endpoint_id) SELECT id FROM new_endpoints ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

-- Created before the backfill: it locks out writers of webhook_endpoints until this migration commits.
CREATE TRIGGER "webhook_endpoints_circuit" AFTER INSERT ON "webhook_endpoints"
  REFERENCING NEW TABLE AS new_endpoints FOR EACH STATEMENT EXECUTE FUNCTION "webhook_endpoints_circuit"();

INSERT INTO "webhook_endpoint_circuits" ("endpoint_id") SELECT "id" FROM "webhook_endpoints" ON CONFLICT DO NOTHING;

-- AlterTable
ALTER TABLE "webhook_deliveries" ADD COLUMN "held_at" TIMESTAMPTZ(3);

-- CreateIndex: the due-delivery pass walks the due deliveries that no breaker holds.
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries"("next_attempt_at")
  WHERE "status" = 'pending' AND "held_at" IS NULL;

-- CreateIndex: an endpoint's pending deliveries by due time (the breaker's probe, what it holds, their age).
CREATE INDEX "webhook_deliveries_endpoint_pending_idx" ON "webhook_deliveries"("endpoint_id", "next_attempt_at")
  WHERE "status" = 'pending';

-- CreateTable
CREATE TABLE "webhook_endpoint_stats" (
    "endpoint_id" UUID NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,
    "attempts" INTEGER NOT NULL,
    "failures" INTEGER NOT NULL,
    "latency" INTEGER[],

    CONSTRAINT "webhook_endpoint_stats_pkey" PRIMARY KEY ("endpoint_id", "minute")
);

-- CreateIndex
CREATE INDEX "webhook_endpoint_stats_minute_idx" ON "webhook_endpoint_stats"("minute");

-- An endpoint's figures go with it (they have no foreign key: recording an attempt must not lock the endpoint's row).
CREATE FUNCTION "webhook_endpoints_stats_gone"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM webhook_endpoint_stats WHERE endpoint_id IN (SELECT id FROM gone_endpoints);
  RETURN NULL;
END $$;

CREATE TRIGGER "webhook_endpoints_stats_gone" AFTER DELETE ON "webhook_endpoints"
  REFERENCING OLD TABLE AS gone_endpoints FOR EACH STATEMENT EXECUTE FUNCTION "webhook_endpoints_stats_gone"();
