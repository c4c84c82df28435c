-- Channel permissions as group settings (upstream feature levels 325, 333, 342,
-- 357): can_send_message_group replaces stream_post_policy (filled from it: the
-- policy's system group, NULL for "everyone"), and can_administer_channel_group,
-- can_add_subscribers_group and can_subscribe_group start empty. An empty column
-- stands for the setting's default system group: role:everyone for
-- can_send_message_group, role:nobody for the others. stream_post_policy is
-- derived from can_send_message_group from now on.

ALTER TABLE "stream" ADD COLUMN "can_send_message_group_id" INTEGER;
ALTER TABLE "stream" ADD COLUMN "can_administer_channel_group_id" INTEGER;
ALTER TABLE "stream" ADD COLUMN "can_add_subscribers_group_id" INTEGER;
ALTER TABLE "stream" ADD COLUMN "can_subscribe_group_id" INTEGER;
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_send_message_group_id_fkey" FOREIGN KEY ("can_send_message_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_administer_channel_group_id_fkey" FOREIGN KEY ("can_administer_channel_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_add_subscribers_group_id_fkey" FOREIGN KEY ("can_add_subscribers_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_subscribe_group_id_fkey" FOREIGN KEY ("can_subscribe_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

UPDATE "stream" s SET "can_send_message_group_id" = (
  SELECT g.id FROM "user_group" g
  WHERE g.realm_id = s.realm_id AND g.is_system_group
    AND g.name = CASE s.stream_post_policy WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' WHEN 4 THEN 'role:moderators' END)
WHERE s.stream_post_policy IN (2, 3, 4);

ALTER TABLE "stream" DROP COLUMN "stream_post_policy";
