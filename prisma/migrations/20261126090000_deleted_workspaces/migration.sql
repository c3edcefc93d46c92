-- CreateTable
CREATE TABLE "deleted_workspaces" (
    "tenant_id" UUID NOT NULL,
    "plan" "Plan" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "requested_at" TIMESTAMPTZ(3) NOT NULL,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "deleted_workspaces_pkey" PRIMARY KEY ("tenant_id")
);

-- The service records a deletion and reads it back; it never changes or removes one.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'chs_app') THEN
    GRANT SELECT, INSERT ON deleted_workspaces TO chs_app;
    REVOKE UPDATE, DELETE, TRUNCATE ON deleted_workspaces FROM chs_app;
  END IF;
END
$$;
