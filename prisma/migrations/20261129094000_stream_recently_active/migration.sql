-- Upstream level 323: is_recently_active on channels. Every channel starts
-- active; the daily check (jobs/stream-activity.ts) then marks those without a
-- message in the last 180 days, and a message to a channel marks it active.
ALTER TABLE "stream" ADD COLUMN "is_recently_active" BOOLEAN NOT NULL DEFAULT true;

-- When each realm's channels are next checked: one row per realm, due at once.
CREATE TABLE "stream_activity_check" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "due_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stream_activity_check_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "stream_activity_check_realm_id_key" ON "stream_activity_check"("realm_id");
CREATE INDEX "stream_activity_check_due_at_idx" ON "stream_activity_check"("due_at");
ALTER TABLE "stream_activity_check" ADD CONSTRAINT "stream_activity_check_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;
