
-- AlterTable
ALTER TABLE "tenants" ADD COLUMN     "audit_retention_days" INTEGER,
ADD COLUMN     "deletion_due_at" TIMESTAMPTZ(3),
ADD COLUMN     "deletion_requested_at" TIMESTAMPTZ(3),
ADD COLUMN     "deletion_requested_by" UUID,
ADD COLUMN     "delivery_retention_days" INTEGER,
ADD COLUMN     "inbound_body_retention_days" INTEGER,
ADD COLUMN     "signal_retention_days" INTEGER;

-- CreateTable
CREATE TABLE "signal_rollups" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "bucket" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "value" DOUBLE PRECISION NOT NULL,
    "previous" DOUBLE PRECISION,
    "actor" TEXT,
    "conversation_id" TEXT,
    "signals" INTEGER NOT NULL,
    "sentiment_sum" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "sentiment_count" INTEGER NOT NULL DEFAULT 0,
    "first_at" TIMESTAMPTZ(3) NOT NULL,
    "last_at" TIMESTAMPTZ(3) NOT NULL,
    "last_created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "signal_rollups_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "retention_runs" (
    "kind" TEXT NOT NULL,
    "last_run_at" TIMESTAMPTZ(3) NOT NULL,
    "processed" BIGINT NOT NULL DEFAULT 0,
    "behind" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "retention_runs_pkey" PRIMARY KEY ("kind")
);

-- CreateIndex
CREATE INDEX "signal_rollups_tenant_id_idx" ON "signal_rollups"("tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "signal_rollups_customer_id_day_bucket_key" ON "signal_rollups"("customer_id", "day", "bucket");

-- CreateIndex
-- Partial: only the bodies retention still has to drop.
CREATE INDEX "inbox_events_body_kept_idx" ON "inbox_events"("tenant_id", "received_at") WHERE "body" <> '';

-- CreateIndex
CREATE INDEX "outbox_events_tenant_id_dispatched_at_idx" ON "outbox_events"("tenant_id", "dispatched_at");

-- CreateIndex
CREATE INDEX "signals_tenant_id_occurred_at_idx" ON "signals"("tenant_id", "occurred_at");

-- CreateIndex
CREATE INDEX "webhook_deliveries_tenant_id_updated_at_idx" ON "webhook_deliveries"("tenant_id", "updated_at");

-- AddForeignKey
ALTER TABLE "signal_rollups" ADD CONSTRAINT "signal_rollups_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "signal_rollups" ADD CONSTRAINT "signal_rollups_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;



-- Append-only audit log, second layer (docs/data-lifecycle.md): the trigger refuses every UPDATE and TRUNCATE,
-- and a DELETE of a row younger than a year unless its workspace is gone or its deletion is due. It binds
-- every role that does not disable triggers; the application's role (chs_app, below) cannot even try.
CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    RAISE EXCEPTION 'audit events cannot be changed' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF TG_OP = 'TRUNCATE' THEN
    RAISE EXCEPTION 'audit events cannot be truncated' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF OLD.occurred_at >= now() - interval '365 days'
     AND EXISTS (SELECT 1 FROM tenants WHERE id = OLD.tenant_id AND (deletion_due_at IS NULL OR deletion_due_at > now())) THEN
    RAISE EXCEPTION 'audit events younger than a year cannot be deleted' USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN OLD;
END
$$;

-- The only way the application removes audit events: a bounded batch of one workspace's rows older than
-- `before`, never younger than a year unless the workspace's deletion is due. It runs with its owner's
-- rights, since the application's role has no DELETE on the table.
CREATE FUNCTION audit_events_purge(p_tenant uuid, p_before timestamptz, p_limit int) RETURNS int
LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
  WITH due AS (
    SELECT CASE WHEN EXISTS (SELECT 1 FROM tenants WHERE id = p_tenant AND deletion_due_at <= now())
                THEN p_before ELSE least(p_before, now() - interval '365 days') END AS before
  ), gone AS (
    DELETE FROM audit_events WHERE id IN (
      SELECT a.id FROM audit_events a, due WHERE a.tenant_id = p_tenant AND a.occurred_at < due.before
      ORDER BY a.occurred_at LIMIT greatest(p_limit, 0))
    RETURNING 1
  )
  SELECT count(*)::int FROM gone
$$;
REVOKE ALL ON FUNCTION audit_events_purge(uuid, timestamptz, int) FROM PUBLIC;

-- The application's role: every table's rows, but audit_events only to insert and read. Operators give
-- the service a login role in it (docs/operations.md); migrations run as the tables' owner. Where the
-- migrating role may not create roles, the grants wait until an operator creates chs_app and migrates again.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'chs_app') THEN
    BEGIN
      CREATE ROLE chs_app NOLOGIN;
    EXCEPTION
      WHEN duplicate_object OR unique_violation THEN NULL;
      WHEN insufficient_privilege THEN RAISE NOTICE 'role chs_app not created: the migrating role may not create roles';
    END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'chs_app') THEN
    GRANT USAGE ON SCHEMA public TO chs_app;
    GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO chs_app;
    REVOKE UPDATE, DELETE, TRUNCATE ON audit_events FROM chs_app;
    GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO chs_app;
    GRANT EXECUTE ON FUNCTION audit_events_purge(uuid, timestamptz, int) TO chs_app;
    ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO chs_app;
    ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO chs_app;
  END IF;
END
$$;

-- Deleting an inbound event (retention, offboarding) clears its signals' link through this index.
CREATE INDEX "signals_inbox_event_id_idx" ON "signals"("inbox_event_id");
