-- The outbox events not relayed yet move to a table of their own: relaying then deletes a small row
-- instead of rewriting the event's row and every index over it.

-- CreateTable
CREATE TABLE "outbox_pending" (
    "event_id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "sequence_subject" TEXT,
    "sequence" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "outbox_pending_pkey" PRIMARY KEY ("event_id")
);

-- The events not relayed when the migration runs stay to relay.
INSERT INTO "outbox_pending" ("event_id", "tenant_id", "sequence_subject", "sequence", "created_at")
SELECT "id", "tenant_id", "sequence_subject", "sequence", "created_at" FROM "outbox_events" WHERE "dispatched_at" IS NULL;

-- CreateIndex
CREATE INDEX "outbox_pending_created_at_idx" ON "outbox_pending"("created_at");

-- CreateIndex
CREATE INDEX "outbox_pending_tenant_id_sequence_subject_sequence_idx" ON "outbox_pending"("tenant_id", "sequence_subject", "sequence");

-- AddForeignKey
ALTER TABLE "outbox_pending" ADD CONSTRAINT "outbox_pending_event_id_fkey" FOREIGN KEY ("event_id") REFERENCES "outbox_events"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- DropIndex
DROP INDEX "outbox_events_undispatched_sequence_idx";

-- DropIndex
DROP INDEX "outbox_events_dispatched_at_created_at_idx";

-- DropIndex
DROP INDEX "outbox_events_tenant_id_dispatched_at_idx";

-- AlterTable
ALTER TABLE "outbox_events" DROP COLUMN "dispatched_at";

-- CreateIndex
CREATE INDEX "outbox_events_tenant_id_created_at_idx" ON "outbox_events"("tenant_id", "created_at");
