-- Asking for a recompute no longer takes a lock anyone else can hold (docs/concurrency.md). The triggers
-- used to upsert scoring_queue rows: an upsert locks the row it meets, so a transaction touching several
-- customers across several statements (a wave of invoice events, a batch of usage events, the scoring
-- loop finishing its claims) could wait on another that waited on it. Now whatever changes a customer's
-- inputs appends one row here per statement, naming its customers; only the scoring loop reads and deletes
-- these rows and writes scoring_queue.

-- DropForeignKey
ALTER TABLE "scoring_queue" DROP CONSTRAINT "scoring_queue_customer_id_fkey";

-- DropForeignKey
ALTER TABLE "scoring_queue" DROP CONSTRAINT "scoring_queue_tenant_id_fkey";

-- CreateTable
CREATE TABLE "scoring_requests" (
    "id" BIGSERIAL NOT NULL,
    "customer_ids" UUID[],
    "due_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "scoring_requests_pkey" PRIMARY KEY ("id")
);

-- A statement that adds or re-attributes signals, invoices or subscriptions asks once for all the customers
-- it touched, due a second from now so that a burst costs one recompute. An insert into a table with no
-- unique key but its own sequence, and no foreign key, waits on nobody.
CREATE OR REPLACE FUNCTION "chs_queue_rescore"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "scoring_requests" ("customer_ids", "due_at")
  SELECT array_agg(DISTINCT "customer_id"), now() + interval '1 second' FROM "changed"
   WHERE "customer_id" IS NOT NULL
  HAVING count("customer_id") > 0;
  RETURN NULL;
END $$;

-- A signal changes what scoring reads only when it gains a customer (attribution); emptying its link to an
-- inbox row that retention deleted changes nothing, and asked for every old signal's customer again.
CREATE FUNCTION "chs_queue_rescore_attributed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "scoring_requests" ("customer_ids", "due_at")
  SELECT array_agg(DISTINCT n."customer_id"), now() + interval '1 second'
    FROM "changed" n JOIN "previous" o ON o."id" = n."id"
   WHERE n."customer_id" IS NOT NULL AND n."customer_id" IS DISTINCT FROM o."customer_id"
  HAVING count(*) > 0;
  RETURN NULL;
END $$;

DROP TRIGGER "signals_rescore_update" ON "signals";
CREATE TRIGGER "signals_rescore_update" AFTER UPDATE ON "signals"
  REFERENCING OLD TABLE AS "previous" NEW TABLE AS "changed" FOR EACH STATEMENT EXECUTE FUNCTION "chs_queue_rescore_attributed"();

-- Attribution no longer makes the API wait for the worker (docs/concurrency.md): whoever gives a customer an
-- identity or a domain attributes what it can at once, skipping rows a transaction applying events holds, and
-- appends a request; the worker completes it holding the tenant's lock exclusively, once every transaction
-- that was applying the tenant's events has ended.
CREATE TABLE "attribution_requests" (
    "id" BIGSERIAL NOT NULL,
    "tenant_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "providers" TEXT[],
    "external_ids" TEXT[],
    "domain" TEXT,
    "requested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "attribution_requests_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "attribution_requests_tenant_id_idx" ON "attribution_requests"("tenant_id");
