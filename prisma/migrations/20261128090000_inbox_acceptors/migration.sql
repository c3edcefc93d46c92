-- A process that stores inbound events claims their publishing in the same INSERT (published_at set,
-- accepted_by its key) rather than recording each confirm afterwards. It registers its key here and holds a
-- shared advisory lock on it while it runs; the sweeper takes that lock exclusively only once the process
-- and every INSERT naming it are gone, and then hands the rows it had claimed and not processed back to
-- the queue (docs/inbound-webhooks.md).
ALTER TABLE "inbox_events" ADD COLUMN "accepted_by" INTEGER;

CREATE TABLE "inbox_acceptors" (
    "key" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "inbox_acceptors_pkey" PRIMARY KEY ("key")
);
