-- User settings upstream added in 10.0: allow_private_data_export (level 293),
-- web_suggest_update_timezone (329), hide_ai_features (350).
ALTER TABLE "user_settings" ADD COLUMN "allow_private_data_export" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "user_settings" ADD COLUMN "web_suggest_update_timezone" BOOLEAN NOT NULL DEFAULT true;
ALTER TABLE "user_settings" ADD COLUMN "hide_ai_features" BOOLEAN NOT NULL DEFAULT false;
-- Custom profile fields a user may not edit on their own account (level 296).
ALTER TABLE "custom_profile_field" ADD COLUMN "editable_by_user" BOOLEAN NOT NULL DEFAULT true;
