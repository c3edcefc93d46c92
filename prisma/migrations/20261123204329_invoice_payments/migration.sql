-- CreateTable
CREATE TABLE "invoice_payments" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "payment_id" TEXT NOT NULL,
    "invoice_external_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "invoice_payments_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "invoice_payments_tenant_id_provider_invoice_external_id_idx" ON "invoice_payments"("tenant_id", "provider", "invoice_external_id");

-- CreateIndex
CREATE UNIQUE INDEX "invoice_payments_tenant_id_provider_payment_id_key" ON "invoice_payments"("tenant_id", "provider", "payment_id");

-- AddForeignKey
ALTER TABLE "invoice_payments" ADD CONSTRAINT "invoice_payments_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
