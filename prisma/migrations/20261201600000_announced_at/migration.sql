-- When a customer's score and its churn probability were last announced: the drivers an announcement
-- carries are those of the changes recorded since.
ALTER TABLE "health_snapshots" ADD COLUMN "announced_at" TIMESTAMPTZ(3);
ALTER TABLE "churn_predictions" ADD COLUMN "announced_at" TIMESTAMPTZ(3);
