-- The private channel moderation requests go to (upstream level 331); none when NULL.
ALTER TABLE "realm" ADD COLUMN "moderation_request_channel_id" INTEGER;
ALTER TABLE "realm" ADD CONSTRAINT "realm_moderation_request_channel_id_fkey"
  FOREIGN KEY ("moderation_request_channel_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;
