-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "realm" (
    "id" SERIAL NOT NULL,
    "string_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "rendered_description" TEXT NOT NULL DEFAULT '',
    "date_created" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "icon_url" TEXT,
    "web_public_access_enabled" BOOLEAN NOT NULL DEFAULT false,
    "email_address_visibility" INTEGER NOT NULL DEFAULT 1,
    "org_type" INTEGER NOT NULL DEFAULT 0,
    "allow_message_editing" BOOLEAN NOT NULL DEFAULT true,
    "edit_topic_policy" INTEGER NOT NULL DEFAULT 5,
    "move_messages_between_streams_policy" INTEGER NOT NULL DEFAULT 1,
    "message_content_edit_limit_seconds" INTEGER DEFAULT 600,
    "move_messages_within_stream_limit_seconds" INTEGER DEFAULT 604800,
    "move_messages_between_streams_limit_seconds" INTEGER DEFAULT 604800,
    "message_content_delete_limit_seconds" INTEGER DEFAULT 600,
    "delete_own_message_policy" INTEGER NOT NULL DEFAULT 5,
    "allow_edit_history" BOOLEAN NOT NULL DEFAULT true,
    "mandatory_topics" BOOLEAN NOT NULL DEFAULT false,
    "message_retention_days" INTEGER NOT NULL DEFAULT -1,
    "wildcard_mention_policy" INTEGER NOT NULL DEFAULT 5,
    "invite_to_realm_policy" INTEGER NOT NULL DEFAULT 1,
    "invite_to_stream_policy" INTEGER NOT NULL DEFAULT 1,
    "user_group_edit_policy" INTEGER NOT NULL DEFAULT 1,
    "add_custom_emoji_policy" INTEGER NOT NULL DEFAULT 1,
    "create_web_public_stream_policy" INTEGER NOT NULL DEFAULT 7,
    "bot_creation_policy" INTEGER NOT NULL DEFAULT 1,
    "waiting_period_threshold" INTEGER NOT NULL DEFAULT 0,
    "create_multiuse_invite_group_id" INTEGER,
    "can_access_all_users_group_id" INTEGER,
    "can_create_public_channel_group_id" INTEGER,
    "can_create_private_channel_group_id" INTEGER,
    "direct_message_initiator_group_id" INTEGER,
    "direct_message_permission_group_id" INTEGER,
    "invite_required" BOOLEAN NOT NULL DEFAULT true,
    "emails_restricted_to_domains" BOOLEAN NOT NULL DEFAULT false,
    "disallow_disposable_email_addresses" BOOLEAN NOT NULL DEFAULT true,
    "max_invites_per_day" INTEGER,
    "password_auth_enabled" BOOLEAN NOT NULL DEFAULT true,
    "send_welcome_emails" BOOLEAN NOT NULL DEFAULT true,
    "name_changes_disabled" BOOLEAN NOT NULL DEFAULT false,
    "email_changes_disabled" BOOLEAN NOT NULL DEFAULT false,
    "avatar_changes_disabled" BOOLEAN NOT NULL DEFAULT false,
    "require_unique_names" BOOLEAN NOT NULL DEFAULT false,
    "max_file_upload_size_mib" INTEGER,
    "default_language" TEXT NOT NULL DEFAULT 'en',
    "video_chat_provider" INTEGER NOT NULL DEFAULT 1,
    "jitsi_server_url" TEXT,
    "presence_disabled" BOOLEAN NOT NULL DEFAULT false,
    "enable_read_receipts" BOOLEAN NOT NULL DEFAULT true,
    "enable_guest_user_indicator" BOOLEAN NOT NULL DEFAULT true,
    "digest_emails_enabled" BOOLEAN NOT NULL DEFAULT false,
    "digest_weekday" INTEGER NOT NULL DEFAULT 1,
    "message_content_allowed_in_email_notifications" BOOLEAN NOT NULL DEFAULT true,
    "default_code_block_language" TEXT NOT NULL DEFAULT '',
    "giphy_rating" INTEGER NOT NULL DEFAULT 2,
    "new_stream_announcements_stream_id" INTEGER,
    "signup_announcements_stream_id" INTEGER,
    "notification_bot_id" INTEGER,

    CONSTRAINT "realm_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "realm_domain" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "domain" TEXT NOT NULL,
    "allow_subdomains" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "realm_domain_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_profile" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "email" TEXT NOT NULL,
    "delivery_email" TEXT NOT NULL,
    "full_name" TEXT NOT NULL,
    "password_hash" TEXT,
    "api_key" VARCHAR(32) NOT NULL,
    "role" INTEGER NOT NULL DEFAULT 400,
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "is_bot" BOOLEAN NOT NULL DEFAULT false,
    "bot_type" INTEGER,
    "bot_owner_id" INTEGER,
    "default_sending_stream_id" INTEGER,
    "default_events_register_stream_id" INTEGER,
    "default_all_public_streams" BOOLEAN NOT NULL DEFAULT false,
    "is_billing_admin" BOOLEAN NOT NULL DEFAULT false,
    "date_joined" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_login" TIMESTAMPTZ(3),
    "timezone" TEXT NOT NULL DEFAULT '',
    "avatar_source" TEXT NOT NULL DEFAULT 'G',
    "avatar_version" INTEGER NOT NULL DEFAULT 1,
    "avatar_hash" TEXT,
    "is_system_bot" BOOLEAN NOT NULL DEFAULT false,
    "tos_version" TEXT,
    "last_active_message_id" INTEGER,

    CONSTRAINT "user_profile_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_settings" (
    "user_id" INTEGER NOT NULL,
    "twenty_four_hour_time" BOOLEAN NOT NULL DEFAULT false,
    "dense_mode" BOOLEAN NOT NULL DEFAULT false,
    "web_mark_read_on_scroll_policy" INTEGER NOT NULL DEFAULT 1,
    "web_channel_default_view" INTEGER NOT NULL DEFAULT 1,
    "starred_message_counts" BOOLEAN NOT NULL DEFAULT true,
    "receives_typing_notifications" BOOLEAN NOT NULL DEFAULT true,
    "fluid_layout_width" BOOLEAN NOT NULL DEFAULT false,
    "high_contrast_mode" BOOLEAN NOT NULL DEFAULT false,
    "web_font_size_px" INTEGER NOT NULL DEFAULT 16,
    "web_line_height_percent" INTEGER NOT NULL DEFAULT 140,
    "color_scheme" INTEGER NOT NULL DEFAULT 1,
    "enable_drafts_synchronization" BOOLEAN NOT NULL DEFAULT true,
    "translate_emoticons" BOOLEAN NOT NULL DEFAULT false,
    "display_emoji_reaction_users" BOOLEAN NOT NULL DEFAULT true,
    "default_language" TEXT NOT NULL DEFAULT 'en',
    "web_home_view" TEXT NOT NULL DEFAULT 'inbox',
    "web_escape_navigates_to_home_view" BOOLEAN NOT NULL DEFAULT true,
    "left_side_userlist" BOOLEAN NOT NULL DEFAULT false,
    "emojiset" TEXT NOT NULL DEFAULT 'google',
    "demote_inactive_streams" INTEGER NOT NULL DEFAULT 1,
    "user_list_style" INTEGER NOT NULL DEFAULT 2,
    "web_animate_image_previews" TEXT NOT NULL DEFAULT 'on_hover',
    "web_stream_unreads_count_display_policy" INTEGER NOT NULL DEFAULT 2,
    "web_navigate_to_sent_message" BOOLEAN NOT NULL DEFAULT true,
    "enter_sends" BOOLEAN NOT NULL DEFAULT false,
    "enable_stream_desktop_notifications" BOOLEAN NOT NULL DEFAULT false,
    "enable_stream_email_notifications" BOOLEAN NOT NULL DEFAULT false,
    "enable_stream_push_notifications" BOOLEAN NOT NULL DEFAULT false,
    "enable_stream_audible_notifications" BOOLEAN NOT NULL DEFAULT false,
    "notification_sound" TEXT NOT NULL DEFAULT 'zulip',
    "enable_desktop_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_sounds" BOOLEAN NOT NULL DEFAULT true,
    "email_notifications_batching_period_seconds" INTEGER NOT NULL DEFAULT 120,
    "enable_offline_email_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_offline_push_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_online_push_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_followed_topic_desktop_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_followed_topic_email_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_followed_topic_push_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_followed_topic_audible_notifications" BOOLEAN NOT NULL DEFAULT true,
    "enable_followed_topic_wildcard_mentions_notify" BOOLEAN NOT NULL DEFAULT true,
    "enable_digest_emails" BOOLEAN NOT NULL DEFAULT true,
    "enable_login_emails" BOOLEAN NOT NULL DEFAULT true,
    "enable_marketing_emails" BOOLEAN NOT NULL DEFAULT true,
    "message_content_in_email_notifications" BOOLEAN NOT NULL DEFAULT true,
    "pm_content_in_desktop_notifications" BOOLEAN NOT NULL DEFAULT true,
    "wildcard_mentions_notify" BOOLEAN NOT NULL DEFAULT true,
    "desktop_icon_count_display" INTEGER NOT NULL DEFAULT 1,
    "realm_name_in_email_notifications_policy" INTEGER NOT NULL DEFAULT 1,
    "automatically_follow_topics_policy" INTEGER NOT NULL DEFAULT 3,
    "automatically_unmute_topics_in_muted_streams_policy" INTEGER NOT NULL DEFAULT 2,
    "automatically_follow_topics_where_mentioned" BOOLEAN NOT NULL DEFAULT true,
    "presence_enabled" BOOLEAN NOT NULL DEFAULT true,
    "send_private_typing_notifications" BOOLEAN NOT NULL DEFAULT true,
    "send_stream_typing_notifications" BOOLEAN NOT NULL DEFAULT true,
    "send_read_receipts" BOOLEAN NOT NULL DEFAULT true,
    "email_address_visibility" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "user_settings_pkey" PRIMARY KEY ("user_id")
);

-- CreateTable
CREATE TABLE "custom_profile_field" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "hint" TEXT NOT NULL DEFAULT '',
    "type" INTEGER NOT NULL,
    "order" INTEGER NOT NULL,
    "field_data" TEXT NOT NULL DEFAULT '',
    "display_in_profile_summary" BOOLEAN NOT NULL DEFAULT false,
    "required" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "custom_profile_field_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "custom_profile_field_value" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "field_id" INTEGER NOT NULL,
    "value" TEXT NOT NULL,
    "rendered_value" TEXT,

    CONSTRAINT "custom_profile_field_value_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "stream" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "rendered_description" TEXT NOT NULL DEFAULT '',
    "date_created" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "creator_id" INTEGER,
    "invite_only" BOOLEAN NOT NULL DEFAULT false,
    "is_web_public" BOOLEAN NOT NULL DEFAULT false,
    "stream_post_policy" INTEGER NOT NULL DEFAULT 1,
    "message_retention_days" INTEGER,
    "history_public_to_subscribers" BOOLEAN NOT NULL DEFAULT true,
    "first_message_id" INTEGER,
    "can_remove_subscribers_group_id" INTEGER NOT NULL,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "stream_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "default_stream" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "stream_id" INTEGER NOT NULL,

    CONSTRAINT "default_stream_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "subscription" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "stream_id" INTEGER NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "color" TEXT NOT NULL,
    "is_muted" BOOLEAN NOT NULL DEFAULT false,
    "pin_to_top" BOOLEAN NOT NULL DEFAULT false,
    "desktop_notifications" BOOLEAN,
    "audible_notifications" BOOLEAN,
    "push_notifications" BOOLEAN,
    "email_notifications" BOOLEAN,
    "wildcard_mentions_notify" BOOLEAN,

    CONSTRAINT "subscription_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "message" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "stream_id" INTEGER,
    "topic" TEXT NOT NULL DEFAULT '',
    "dm_user_ids" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "content" TEXT NOT NULL,
    "rendered_content" TEXT NOT NULL,
    "date_sent" TIMESTAMPTZ(3) NOT NULL,
    "last_edit_time" TIMESTAMPTZ(3),
    "edit_history" JSONB,
    "client" TEXT NOT NULL DEFAULT '',
    "has_link" BOOLEAN NOT NULL DEFAULT false,
    "has_image" BOOLEAN NOT NULL DEFAULT false,
    "has_attachment" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_message" (
    "user_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "flags" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "user_message_pkey" PRIMARY KEY ("user_id","message_id")
);

-- CreateTable
CREATE TABLE "reaction" (
    "id" SERIAL NOT NULL,
    "message_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "emoji_name" TEXT NOT NULL,
    "emoji_code" TEXT NOT NULL,
    "reaction_type" TEXT NOT NULL DEFAULT 'unicode_emoji',

    CONSTRAINT "reaction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "realm_emoji" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "file_name" TEXT NOT NULL,
    "author_id" INTEGER,
    "is_animated" BOOLEAN NOT NULL DEFAULT false,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "realm_emoji_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_group" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "is_system_group" BOOLEAN NOT NULL DEFAULT false,
    "date_created" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "creator_id" INTEGER,
    "can_mention_group_id" INTEGER,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "user_group_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_group_member" (
    "group_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,

    CONSTRAINT "user_group_member_pkey" PRIMARY KEY ("group_id","user_id")
);

-- CreateTable
CREATE TABLE "user_group_subgroup" (
    "supergroup_id" INTEGER NOT NULL,
    "subgroup_id" INTEGER NOT NULL,

    CONSTRAINT "user_group_subgroup_pkey" PRIMARY KEY ("supergroup_id","subgroup_id")
);

-- CreateTable
CREATE TABLE "user_topic" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "stream_id" INTEGER NOT NULL,
    "topic_name" TEXT NOT NULL,
    "visibility_policy" INTEGER NOT NULL,
    "last_updated" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "user_topic_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user_status" (
    "user_id" INTEGER NOT NULL,
    "status_text" TEXT NOT NULL DEFAULT '',
    "emoji_name" TEXT NOT NULL DEFAULT '',
    "emoji_code" TEXT NOT NULL DEFAULT '',
    "reaction_type" TEXT NOT NULL DEFAULT 'unicode_emoji',
    "timestamp" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "user_status_pkey" PRIMARY KEY ("user_id")
);

-- CreateTable
CREATE TABLE "alert_word" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "word" TEXT NOT NULL,

    CONSTRAINT "alert_word_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "draft" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "to" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "topic" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "last_edit_time" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "draft_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "scheduled_message" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "sender_id" INTEGER NOT NULL,
    "recipient_type" TEXT NOT NULL,
    "stream_id" INTEGER,
    "to" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "topic" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "rendered_content" TEXT NOT NULL,
    "scheduled_timestamp" TIMESTAMPTZ(3) NOT NULL,
    "read_by_sender" BOOLEAN NOT NULL DEFAULT false,
    "delivered" BOOLEAN NOT NULL DEFAULT false,
    "failed" BOOLEAN NOT NULL DEFAULT false,
    "failure_message" TEXT,
    "delivered_message_id" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "scheduled_message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invitation" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "email" TEXT NOT NULL,
    "invited_by_id" INTEGER NOT NULL,
    "invite_as" INTEGER NOT NULL DEFAULT 400,
    "stream_ids" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "include_realm_default_subscriptions" BOOLEAN NOT NULL DEFAULT false,
    "notify_referrer_on_join" BOOLEAN NOT NULL DEFAULT true,
    "key" TEXT NOT NULL,
    "status" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),

    CONSTRAINT "invitation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "multiuse_invite" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "referred_by_id" INTEGER NOT NULL,
    "invite_as" INTEGER NOT NULL DEFAULT 400,
    "stream_ids" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "include_realm_default_subscriptions" BOOLEAN NOT NULL DEFAULT false,
    "key" TEXT NOT NULL,
    "status" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),

    CONSTRAINT "multiuse_invite_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "email_change_request" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "old_email" TEXT NOT NULL,
    "new_email" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "email_change_request_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attachment" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "owner_id" INTEGER NOT NULL,
    "file_name" TEXT NOT NULL,
    "path_id" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "content_type" TEXT NOT NULL DEFAULT 'application/octet-stream',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "attachment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "attachment_message" (
    "attachment_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,

    CONSTRAINT "attachment_message_pkey" PRIMARY KEY ("attachment_id","message_id")
);

-- CreateTable
CREATE TABLE "attachment_scheduled_message" (
    "attachment_id" INTEGER NOT NULL,
    "scheduled_message_id" INTEGER NOT NULL,

    CONSTRAINT "attachment_scheduled_message_pkey" PRIMARY KEY ("attachment_id","scheduled_message_id")
);

-- CreateTable
CREATE TABLE "realm_linkifier" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "pattern" TEXT NOT NULL,
    "url_template" TEXT NOT NULL,
    "order" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "realm_linkifier_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "realm_string_id_key" ON "realm"("string_id");

-- CreateIndex
CREATE UNIQUE INDEX "realm_domain_realm_id_domain_key" ON "realm_domain"("realm_id", "domain");

-- CreateIndex
CREATE UNIQUE INDEX "user_profile_api_key_key" ON "user_profile"("api_key");

-- CreateIndex
CREATE INDEX "user_profile_bot_owner_id_idx" ON "user_profile"("bot_owner_id");

-- CreateIndex
CREATE UNIQUE INDEX "user_profile_realm_id_delivery_email_key" ON "user_profile"("realm_id", "delivery_email");

-- CreateIndex
CREATE UNIQUE INDEX "user_profile_realm_id_email_key" ON "user_profile"("realm_id", "email");

-- CreateIndex
CREATE UNIQUE INDEX "custom_profile_field_realm_id_name_key" ON "custom_profile_field"("realm_id", "name");

-- CreateIndex
CREATE INDEX "custom_profile_field_value_field_id_idx" ON "custom_profile_field_value"("field_id");

-- CreateIndex
CREATE UNIQUE INDEX "custom_profile_field_value_user_id_field_id_key" ON "custom_profile_field_value"("user_id", "field_id");

-- CreateIndex
CREATE INDEX "stream_can_remove_subscribers_group_id_idx" ON "stream"("can_remove_subscribers_group_id");

-- CreateIndex
CREATE UNIQUE INDEX "stream_realm_id_name_key" ON "stream"("realm_id", "name");

-- CreateIndex
CREATE INDEX "default_stream_stream_id_idx" ON "default_stream"("stream_id");

-- CreateIndex
CREATE UNIQUE INDEX "default_stream_realm_id_stream_id_key" ON "default_stream"("realm_id", "stream_id");

-- CreateIndex
CREATE INDEX "subscription_stream_id_idx" ON "subscription"("stream_id");

-- CreateIndex
CREATE UNIQUE INDEX "subscription_user_id_stream_id_key" ON "subscription"("user_id", "stream_id");

-- CreateIndex
CREATE INDEX "message_stream_id_topic_id_idx" ON "message"("stream_id", "topic", "id");

-- CreateIndex
CREATE INDEX "message_realm_id_id_idx" ON "message"("realm_id", "id");

-- CreateIndex
CREATE INDEX "message_sender_id_id_idx" ON "message"("sender_id", "id");

-- CreateIndex
CREATE INDEX "message_dm_user_ids_idx" ON "message" USING GIN ("dm_user_ids");

-- CreateIndex
CREATE INDEX "user_message_message_id_idx" ON "user_message"("message_id");

-- CreateIndex
CREATE INDEX "reaction_user_id_idx" ON "reaction"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "reaction_message_id_user_id_emoji_code_reaction_type_key" ON "reaction"("message_id", "user_id", "emoji_code", "reaction_type");

-- CreateIndex
CREATE INDEX "realm_emoji_realm_id_name_idx" ON "realm_emoji"("realm_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "user_group_realm_id_name_key" ON "user_group"("realm_id", "name");

-- CreateIndex
CREATE INDEX "user_group_member_user_id_idx" ON "user_group_member"("user_id");

-- CreateIndex
CREATE INDEX "user_group_subgroup_subgroup_id_idx" ON "user_group_subgroup"("subgroup_id");

-- CreateIndex
CREATE INDEX "user_topic_stream_id_topic_name_idx" ON "user_topic"("stream_id", "topic_name");

-- CreateIndex
CREATE UNIQUE INDEX "user_topic_user_id_stream_id_topic_name_key" ON "user_topic"("user_id", "stream_id", "topic_name");

-- CreateIndex
CREATE UNIQUE INDEX "alert_word_user_id_word_key" ON "alert_word"("user_id", "word");

-- CreateIndex
CREATE INDEX "draft_user_id_last_edit_time_idx" ON "draft"("user_id", "last_edit_time");

-- CreateIndex
CREATE INDEX "scheduled_message_delivered_failed_scheduled_timestamp_idx" ON "scheduled_message"("delivered", "failed", "scheduled_timestamp");

-- CreateIndex
CREATE INDEX "scheduled_message_sender_id_delivered_idx" ON "scheduled_message"("sender_id", "delivered");

-- CreateIndex
CREATE UNIQUE INDEX "invitation_key_key" ON "invitation"("key");

-- CreateIndex
CREATE INDEX "invitation_realm_id_status_idx" ON "invitation"("realm_id", "status");

-- CreateIndex
CREATE INDEX "invitation_invited_by_id_idx" ON "invitation"("invited_by_id");

-- CreateIndex
CREATE UNIQUE INDEX "multiuse_invite_key_key" ON "multiuse_invite"("key");

-- CreateIndex
CREATE INDEX "multiuse_invite_realm_id_status_idx" ON "multiuse_invite"("realm_id", "status");

-- CreateIndex
CREATE INDEX "multiuse_invite_referred_by_id_idx" ON "multiuse_invite"("referred_by_id");

-- CreateIndex
CREATE UNIQUE INDEX "email_change_request_key_key" ON "email_change_request"("key");

-- CreateIndex
CREATE INDEX "email_change_request_user_id_idx" ON "email_change_request"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "attachment_path_id_key" ON "attachment"("path_id");

-- CreateIndex
CREATE INDEX "attachment_owner_id_idx" ON "attachment"("owner_id");

-- CreateIndex
CREATE INDEX "attachment_realm_id_created_at_idx" ON "attachment"("realm_id", "created_at");

-- CreateIndex
CREATE INDEX "attachment_message_message_id_idx" ON "attachment_message"("message_id");

-- CreateIndex
CREATE INDEX "attachment_scheduled_message_scheduled_message_id_idx" ON "attachment_scheduled_message"("scheduled_message_id");

-- CreateIndex
CREATE INDEX "realm_linkifier_realm_id_order_idx" ON "realm_linkifier"("realm_id", "order");

-- CreateIndex
CREATE UNIQUE INDEX "realm_linkifier_realm_id_pattern_key" ON "realm_linkifier"("realm_id", "pattern");

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_create_multiuse_invite_group_id_fkey" FOREIGN KEY ("create_multiuse_invite_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_access_all_users_group_id_fkey" FOREIGN KEY ("can_access_all_users_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_create_public_channel_group_id_fkey" FOREIGN KEY ("can_create_public_channel_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_can_create_private_channel_group_id_fkey" FOREIGN KEY ("can_create_private_channel_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_direct_message_initiator_group_id_fkey" FOREIGN KEY ("direct_message_initiator_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_direct_message_permission_group_id_fkey" FOREIGN KEY ("direct_message_permission_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_new_stream_announcements_stream_id_fkey" FOREIGN KEY ("new_stream_announcements_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_signup_announcements_stream_id_fkey" FOREIGN KEY ("signup_announcements_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm" ADD CONSTRAINT "realm_notification_bot_id_fkey" FOREIGN KEY ("notification_bot_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_domain" ADD CONSTRAINT "realm_domain_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_bot_owner_id_fkey" FOREIGN KEY ("bot_owner_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_default_sending_stream_id_fkey" FOREIGN KEY ("default_sending_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_profile" ADD CONSTRAINT "user_profile_default_events_register_stream_id_fkey" FOREIGN KEY ("default_events_register_stream_id") REFERENCES "stream"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_settings" ADD CONSTRAINT "user_settings_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "custom_profile_field" ADD CONSTRAINT "custom_profile_field_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "custom_profile_field_value" ADD CONSTRAINT "custom_profile_field_value_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "custom_profile_field_value" ADD CONSTRAINT "custom_profile_field_value_field_id_fkey" FOREIGN KEY ("field_id") REFERENCES "custom_profile_field"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_creator_id_fkey" FOREIGN KEY ("creator_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stream" ADD CONSTRAINT "stream_can_remove_subscribers_group_id_fkey" FOREIGN KEY ("can_remove_subscribers_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "default_stream" ADD CONSTRAINT "default_stream_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "default_stream" ADD CONSTRAINT "default_stream_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscription" ADD CONSTRAINT "subscription_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscription" ADD CONSTRAINT "subscription_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message" ADD CONSTRAINT "message_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message" ADD CONSTRAINT "message_sender_id_fkey" FOREIGN KEY ("sender_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "message" ADD CONSTRAINT "message_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_message" ADD CONSTRAINT "user_message_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_message" ADD CONSTRAINT "user_message_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reaction" ADD CONSTRAINT "reaction_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reaction" ADD CONSTRAINT "reaction_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_emoji" ADD CONSTRAINT "realm_emoji_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_emoji" ADD CONSTRAINT "realm_emoji_author_id_fkey" FOREIGN KEY ("author_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_group" ADD CONSTRAINT "user_group_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_group" ADD CONSTRAINT "user_group_creator_id_fkey" FOREIGN KEY ("creator_id") REFERENCES "user_profile"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_group" ADD CONSTRAINT "user_group_can_mention_group_id_fkey" FOREIGN KEY ("can_mention_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_group_member" ADD CONSTRAINT "user_group_member_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "user_group"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_group_member" ADD CONSTRAINT "user_group_member_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_group_subgroup" ADD CONSTRAINT "user_group_subgroup_supergroup_id_fkey" FOREIGN KEY ("supergroup_id") REFERENCES "user_group"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_group_subgroup" ADD CONSTRAINT "user_group_subgroup_subgroup_id_fkey" FOREIGN KEY ("subgroup_id") REFERENCES "user_group"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_topic" ADD CONSTRAINT "user_topic_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_topic" ADD CONSTRAINT "user_topic_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "user_status" ADD CONSTRAINT "user_status_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_word" ADD CONSTRAINT "alert_word_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "draft" ADD CONSTRAINT "draft_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scheduled_message" ADD CONSTRAINT "scheduled_message_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scheduled_message" ADD CONSTRAINT "scheduled_message_sender_id_fkey" FOREIGN KEY ("sender_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scheduled_message" ADD CONSTRAINT "scheduled_message_stream_id_fkey" FOREIGN KEY ("stream_id") REFERENCES "stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "scheduled_message" ADD CONSTRAINT "scheduled_message_delivered_message_id_fkey" FOREIGN KEY ("delivered_message_id") REFERENCES "message"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invitation" ADD CONSTRAINT "invitation_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "invitation" ADD CONSTRAINT "invitation_invited_by_id_fkey" FOREIGN KEY ("invited_by_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "multiuse_invite" ADD CONSTRAINT "multiuse_invite_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "multiuse_invite" ADD CONSTRAINT "multiuse_invite_referred_by_id_fkey" FOREIGN KEY ("referred_by_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "email_change_request" ADD CONSTRAINT "email_change_request_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachment" ADD CONSTRAINT "attachment_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachment" ADD CONSTRAINT "attachment_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachment_message" ADD CONSTRAINT "attachment_message_attachment_id_fkey" FOREIGN KEY ("attachment_id") REFERENCES "attachment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachment_message" ADD CONSTRAINT "attachment_message_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachment_scheduled_message" ADD CONSTRAINT "attachment_scheduled_message_attachment_id_fkey" FOREIGN KEY ("attachment_id") REFERENCES "attachment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "attachment_scheduled_message" ADD CONSTRAINT "attachment_scheduled_message_scheduled_message_id_fkey" FOREIGN KEY ("scheduled_message_id") REFERENCES "scheduled_message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "realm_linkifier" ADD CONSTRAINT "realm_linkifier_realm_id_fkey" FOREIGN KEY ("realm_id") REFERENCES "realm"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- ---------------------------------------------------------------------------
-- Hand-written: indexes schema.prisma cannot express. A later
-- `prisma migrate diff` from the schema will not know them; keep them out of
-- any generated DROP INDEX lines.

-- Addresses and channel names are unique per realm regardless of case
-- (lookups compare lower()).
CREATE UNIQUE INDEX "user_profile_realm_id_lower_delivery_email_key" ON "user_profile" ("realm_id", lower("delivery_email"));
CREATE UNIQUE INDEX "user_profile_realm_id_lower_email_key" ON "user_profile" ("realm_id", lower("email"));
CREATE UNIQUE INDEX "stream_realm_id_lower_name_key" ON "stream" ("realm_id", lower("name"));

-- Topic narrows match case-insensitively.
CREATE INDEX "message_stream_id_lower_topic_id_idx" ON "message" ("stream_id", lower("topic"), "id") WHERE "stream_id" IS NOT NULL;

-- A direct-message conversation is an exact participant set.
CREATE INDEX "message_realm_id_dm_user_ids_id_idx" ON "message" ("realm_id", "dm_user_ids", "id") WHERE "stream_id" IS NULL;

-- Per-user flag lookups (bits from upstream-behaviour §4): unread (read = 1
-- unset), starred (2), any mention (8|16|32|64 = 120), alert word (512),
-- direct message (is_private = 2048).
CREATE INDEX "user_message_unread_idx" ON "user_message" ("user_id", "message_id") WHERE ("flags" & 1) = 0;
CREATE INDEX "user_message_starred_idx" ON "user_message" ("user_id", "message_id") WHERE ("flags" & 2) <> 0;
CREATE INDEX "user_message_mentioned_idx" ON "user_message" ("user_id", "message_id") WHERE ("flags" & 120) <> 0;
CREATE INDEX "user_message_has_alert_word_idx" ON "user_message" ("user_id", "message_id") WHERE ("flags" & 512) <> 0;
CREATE INDEX "user_message_private_idx" ON "user_message" ("user_id", "message_id") WHERE ("flags" & 2048) <> 0;
