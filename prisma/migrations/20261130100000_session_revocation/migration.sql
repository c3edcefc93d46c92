-- Sessions revoked on the server (docs/operations.md, "Signing out and revoking sessions"): a signed-out
-- session's token hash until it would have expired, and a time at or before which every session of a user
-- or of a workspace is refused.

-- AlterTable
ALTER TABLE "tenants" ADD COLUMN     "sessions_valid_after" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "users" ADD COLUMN     "sessions_valid_after" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "revoked_sessions" (
    "token_hash" TEXT NOT NULL,
    "user_id" UUID NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "revoked_sessions_pkey" PRIMARY KEY ("token_hash")
);

-- CreateIndex
CREATE INDEX "revoked_sessions_user_id_expires_at_idx" ON "revoked_sessions"("user_id", "expires_at");

-- AddForeignKey
ALTER TABLE "revoked_sessions" ADD CONSTRAINT "revoked_sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;


