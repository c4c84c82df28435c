-- A push target (browser subscription, mobile token) that keeps failing is
-- retried with a capped exponential backoff (retry_at) and deleted after a
-- bounded number of consecutive failures (failures).
-- AlterTable
ALTER TABLE "web_push_subscription" ADD COLUMN "failures" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "retry_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "push_device" ADD COLUMN "failures" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "retry_at" TIMESTAMPTZ(3);
