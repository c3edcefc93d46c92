-- The outbox events not relayed yet move to a table of their own: relaying then deletes a small row
-- instead of rewriting the event's row and every index over it.
--
-- Safe while processes of the earlier release still run (a rolling deploy): every event inserted, by any
-- process, gets its pending row from the trigger below; `dispatched_at`, which an earlier relay still
-- writes, stays (with the index that relay reads) until a later release; a delivery relayed twice, by an
-- earlier relay and a new one, is one row (its unique key on event and endpoint).

-- CreateTable
CREATE TABLE "outbox_pending" (
    "event_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "sequence_subject" TEXT,
    "sequence" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "outbox_pending_pkey" PRIMARY KEY ("event_id")
);

-- CreateIndex
CREATE INDEX "outbox_pending_created_at_idx" ON "outbox_pending"("created_at");

-- CreateIndex
CREATE INDEX "outbox_pending_tenant_id_sequence_subject_sequence_idx" ON "outbox_pending"("tenant_id", "sequence_subject", "sequence");

-- AddForeignKey
ALTER TABLE "outbox_pending" ADD CONSTRAINT "outbox_pending_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "outbox_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- One statement per INSERT into outbox_events, whatever wrote it, lists the new events as still to relay.
CREATE FUNCTION "outbox_events_pending"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO outbox_pending (event_id, tenant_id, sequence_subject, sequence, created_at)
  SELECT id, tenant_id, sequence_subject, sequence, created_at FROM new_events;
  RETURN NULL;
END $$;

-- Created before the backfill: it locks out writers of outbox_events until this migration commits, so
-- every event is either seen by the backfill or inserted later, through the trigger.
CREATE TRIGGER "outbox_events_pending" AFTER INSERT ON "outbox_events"
  REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION "outbox_events_pending"();

INSERT INTO "outbox_pending" ("event_id", "tenant_id", "sequence_subject", "sequence", "created_at")
SELECT "id", "tenant_id", "sequence_subject", "sequence", "created_at" FROM "outbox_events" WHERE "dispatched_at" IS NULL
ON CONFLICT DO NOTHING;

-- DropIndex: an ordered endpoint's claim now asks outbox_pending.
DROP INDEX "outbox_events_undispatched_sequence_idx";

-- DropIndex: retention counts from created_at.
DROP INDEX "outbox_events_tenant_id_dispatched_at_idx";

-- CreateIndex
CREATE INDEX "outbox_events_tenant_id_created_at_idx" ON "outbox_events"("tenant_id", "created_at");
