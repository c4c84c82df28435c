-- Realm permissions as group settings (upstream feature levels 280-367): one
-- user-group column per can_*_group setting, filled from the integer policy
-- it replaces (the policy's system group), after which the policies go; the
-- spec's *_policy values are now derived from these columns.

ALTER TABLE "realm" ADD COLUMN "can_add_custom_emoji_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_add_subscribers_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_create_bots_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_create_groups_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_create_web_public_channel_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_create_write_only_bots_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_delete_any_message_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_delete_own_message_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_invite_users_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_manage_all_groups_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_manage_billing_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_mention_many_users_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_move_messages_between_channels_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_move_messages_between_topics_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_resolve_topics_group_id" INTEGER;
ALTER TABLE "realm" ADD COLUMN "can_summarize_topics_group_id" INTEGER;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_add_custom_emoji_group_id_fkey" FOREIGN KEY ("can_add_custom_emoji_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_add_subscribers_group_id_fkey" FOREIGN KEY ("can_add_subscribers_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_create_bots_group_id_fkey" FOREIGN KEY ("can_create_bots_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_create_groups_id_fkey" FOREIGN KEY ("can_create_groups_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_create_web_public_channel_group_id_fkey" FOREIGN KEY ("can_create_web_public_channel_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_create_write_only_bots_group_id_fkey" FOREIGN KEY ("can_create_write_only_bots_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_delete_any_message_group_id_fkey" FOREIGN KEY ("can_delete_any_message_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_delete_own_message_group_id_fkey" FOREIGN KEY ("can_delete_own_message_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_invite_users_group_id_fkey" FOREIGN KEY ("can_invite_users_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_manage_all_groups_id_fkey" FOREIGN KEY ("can_manage_all_groups_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_manage_billing_group_id_fkey" FOREIGN KEY ("can_manage_billing_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_mention_many_users_group_id_fkey" FOREIGN KEY ("can_mention_many_users_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_move_messages_between_channels_group_id_fkey" FOREIGN KEY ("can_move_messages_between_channels_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_move_messages_between_topics_group_id_fkey" FOREIGN KEY ("can_move_messages_between_topics_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_resolve_topics_group_id_fkey" FOREIGN KEY ("can_resolve_topics_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_summarize_topics_group_id_fkey" FOREIGN KEY ("can_summarize_topics_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

UPDATE "realm" r SET
  "can_add_custom_emoji_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = CASE r.add_custom_emoji_policy WHEN 1 THEN 'role:members' WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' WHEN 4 THEN 'role:moderators' WHEN 5 THEN 'role:everyone' WHEN 6 THEN 'role:nobody' WHEN 7 THEN 'role:owners' ELSE 'role:members' END),
  "can_add_subscribers_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = CASE r.invite_to_stream_policy WHEN 1 THEN 'role:members' WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' WHEN 4 THEN 'role:moderators' WHEN 5 THEN 'role:everyone' WHEN 6 THEN 'role:nobody' WHEN 7 THEN 'role:owners' ELSE 'role:members' END),
  "can_create_bots_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = CASE r.bot_creation_policy WHEN 1 THEN 'role:members' ELSE 'role:administrators' END),
  "can_create_groups_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = CASE r.user_group_edit_policy WHEN 1 THEN 'role:members' WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' WHEN 4 THEN 'role:moderators' WHEN 5 THEN 'role:everyone' WHEN 6 THEN 'role:nobody' WHEN 7 THEN 'role:owners' ELSE 'role:members' END),
  "can_create_web_public_channel_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = CASE r.create_web_public_stream_policy WHEN 1 THEN 'role:members' WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' WHEN 4 THEN 'role:moderators' WHEN 5 THEN 'role:everyone' WHEN 6 THEN 'role:nobody' WHEN 7 THEN 'role:owners' ELSE 'role:owners' END),
  "can_create_write_only_bots_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = CASE r.bot_creation_policy WHEN 3 THEN 'role:administrators' ELSE 'role:members' END),
  "can_delete_any_message_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = 'role:administrators'),
  "can_delete_own_message_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = CASE r.delete_own_message_policy WHEN 1 THEN 'role:members' WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' WHEN 4 THEN 'role:moderators' WHEN 5 THEN 'role:everyone' WHEN 6 THEN 'role:nobody' WHEN 7 THEN 'role:owners' ELSE 'role:everyone' END),
  "can_invite_users_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = CASE r.invite_to_realm_policy WHEN 1 THEN 'role:members' WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' WHEN 4 THEN 'role:moderators' WHEN 5 THEN 'role:everyone' WHEN 6 THEN 'role:nobody' WHEN 7 THEN 'role:owners' ELSE 'role:members' END),
  "can_manage_all_groups_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = 'role:owners'),
  "can_manage_billing_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = 'role:administrators'),
  "can_mention_many_users_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = CASE r.wildcard_mention_policy WHEN 1 THEN 'role:everyone' WHEN 2 THEN 'role:members' WHEN 3 THEN 'role:fullmembers' WHEN 5 THEN 'role:administrators' WHEN 6 THEN 'role:nobody' WHEN 7 THEN 'role:moderators' ELSE 'role:everyone' END),
  "can_move_messages_between_channels_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = CASE r.move_messages_between_streams_policy WHEN 1 THEN 'role:members' WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' WHEN 4 THEN 'role:moderators' WHEN 5 THEN 'role:everyone' WHEN 6 THEN 'role:nobody' WHEN 7 THEN 'role:owners' ELSE 'role:members' END),
  "can_move_messages_between_topics_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = CASE r.edit_topic_policy WHEN 1 THEN 'role:members' WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' WHEN 4 THEN 'role:moderators' WHEN 5 THEN 'role:everyone' WHEN 6 THEN 'role:nobody' WHEN 7 THEN 'role:owners' ELSE 'role:everyone' END),
  "can_resolve_topics_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = CASE r.edit_topic_policy WHEN 1 THEN 'role:members' WHEN 2 THEN 'role:administrators' WHEN 3 THEN 'role:fullmembers' WHEN 4 THEN 'role:moderators' WHEN 5 THEN 'role:everyone' WHEN 6 THEN 'role:nobody' WHEN 7 THEN 'role:owners' ELSE 'role:everyone' END),
  "can_summarize_topics_group_id" = (SELECT g.id FROM "user_group" g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = 'role:everyone');

ALTER TABLE "realm" DROP COLUMN "edit_topic_policy";
ALTER TABLE "realm" DROP COLUMN "move_messages_between_streams_policy";
ALTER TABLE "realm" DROP COLUMN "delete_own_message_policy";
ALTER TABLE "realm" DROP COLUMN "wildcard_mention_policy";
ALTER TABLE "realm" DROP COLUMN "invite_to_realm_policy";
ALTER TABLE "realm" DROP COLUMN "invite_to_stream_policy";
ALTER TABLE "realm" DROP COLUMN "user_group_edit_policy";
ALTER TABLE "realm" DROP COLUMN "add_custom_emoji_policy";
ALTER TABLE "realm" DROP COLUMN "create_web_public_stream_policy";
ALTER TABLE "realm" DROP COLUMN "bot_creation_policy";
