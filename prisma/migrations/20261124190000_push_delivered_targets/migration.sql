-- The targets (devices, browsers, the bouncer) a pending push already reached:
-- a retry after a partial failure goes only to the others, so no device gets
-- the same notification twice.
-- AlterTable
ALTER TABLE "missed_push_notification" ADD COLUMN "delivered_to" TEXT[] DEFAULT ARRAY[]::TEXT[];
