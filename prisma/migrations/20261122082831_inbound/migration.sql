-- CreateEnum
CREATE TYPE "InvoiceStatus" AS ENUM ('draft', 'open', 'sent', 'paid', 'overdue', 'void', 'uncollectible');

-- CreateEnum
CREATE TYPE "InboxStatus" AS ENUM ('received', 'processed', 'ignored', 'failed');

-- CreateTable
CREATE TABLE "inbound_secrets" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "previous_secret" TEXT,
    "previous_expires_at" TIMESTAMPTZ(3),
    "verify_token" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "inbound_secrets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "inbox_events" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "dedup_key" TEXT NOT NULL,
    "event_type" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "status" "InboxStatus" NOT NULL DEFAULT 'received',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "published_at" TIMESTAMPTZ(3),
    "processed_at" TIMESTAMPTZ(3),

    CONSTRAINT "inbox_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invoices" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "customer_id" UUID,
    "provider" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "account_id" TEXT,
    "status" "InvoiceStatus" NOT NULL,
    "total_minor" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "due_at" TIMESTAMPTZ(3),
    "paid_at" TIMESTAMPTZ(3),
    "overdue_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "invoices_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "subscriptions" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "customer_id" UUID,
    "provider" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "account_id" TEXT,
    "status" TEXT NOT NULL,
    "trial_end" TIMESTAMPTZ(3),
    "seats" INTEGER,
    "plan_id" TEXT,
    "mrr_minor" BIGINT,
    "currency" TEXT,
    "canceled_at" TIMESTAMPTZ(3),
    "last_event_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "signals" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "customer_id" UUID,
    "inbox_event_id" UUID,
    "source" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "value" DOUBLE PRECISION NOT NULL DEFAULT 1,
    "sentiment" DOUBLE PRECISION,
    "account_id" TEXT,
    "alt_account_id" TEXT,
    "email_domain" TEXT,
    "attributes" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "signals_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "churn_outcomes" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "churned" BOOLEAN NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "source" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "churn_outcomes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "outbox_events" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "subject" TEXT,
    "payload" JSONB NOT NULL,
    "dedup_key" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "dispatched_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "inbound_secrets_tenant_id_provider_key" ON "inbound_secrets"("tenant_id", "provider");

-- CreateIndex
CREATE INDEX "inbox_events_status_published_at_received_at_idx" ON "inbox_events"("status", "published_at", "received_at");

-- CreateIndex
CREATE INDEX "inbox_events_tenant_id_provider_received_at_idx" ON "inbox_events"("tenant_id", "provider", "received_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "inbox_events_tenant_id_provider_dedup_key_key" ON "inbox_events"("tenant_id", "provider", "dedup_key");

-- CreateIndex
CREATE INDEX "invoices_status_due_at_idx" ON "invoices"("status", "due_at");

-- CreateIndex
CREATE INDEX "invoices_tenant_id_account_id_idx" ON "invoices"("tenant_id", "account_id");

-- CreateIndex
CREATE INDEX "invoices_customer_id_idx" ON "invoices"("customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "invoices_tenant_id_provider_external_id_key" ON "invoices"("tenant_id", "provider", "external_id");

-- CreateIndex
CREATE INDEX "subscriptions_tenant_id_account_id_idx" ON "subscriptions"("tenant_id", "account_id");

-- CreateIndex
CREATE INDEX "subscriptions_customer_id_idx" ON "subscriptions"("customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "subscriptions_tenant_id_provider_external_id_key" ON "subscriptions"("tenant_id", "provider", "external_id");

-- CreateIndex
CREATE INDEX "signals_customer_id_kind_occurred_at_idx" ON "signals"("customer_id", "kind", "occurred_at" DESC);

-- CreateIndex
CREATE INDEX "signals_tenant_id_source_account_id_idx" ON "signals"("tenant_id", "source", "account_id");

-- CreateIndex
CREATE INDEX "signals_tenant_id_source_alt_account_id_idx" ON "signals"("tenant_id", "source", "alt_account_id");

-- CreateIndex
CREATE INDEX "signals_tenant_id_email_domain_idx" ON "signals"("tenant_id", "email_domain");

-- CreateIndex
CREATE INDEX "churn_outcomes_tenant_id_customer_id_at_idx" ON "churn_outcomes"("tenant_id", "customer_id", "at" DESC);

-- CreateIndex
CREATE INDEX "outbox_events_dispatched_at_created_at_idx" ON "outbox_events"("dispatched_at", "created_at");

-- CreateIndex
CREATE INDEX "outbox_events_tenant_id_type_created_at_idx" ON "outbox_events"("tenant_id", "type", "created_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "outbox_events_tenant_id_dedup_key_key" ON "outbox_events"("tenant_id", "dedup_key");

-- AddForeignKey
ALTER TABLE "inbound_secrets" ADD CONSTRAINT "inbound_secrets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "inbox_events" ADD CONSTRAINT "inbox_events_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "signals" ADD CONSTRAINT "signals_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "signals" ADD CONSTRAINT "signals_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "signals" ADD CONSTRAINT "signals_inbox_event_id_fkey" FOREIGN KEY ("inbox_event_id") REFERENCES "inbox_events"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "churn_outcomes" ADD CONSTRAINT "churn_outcomes_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "churn_outcomes" ADD CONSTRAINT "churn_outcomes_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "outbox_events" ADD CONSTRAINT "outbox_events_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
