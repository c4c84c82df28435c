-- Upstream's can_change_user_emails (level 313): an administrator with it may change other users' real addresses.
ALTER TABLE "user_profile" ADD COLUMN "can_change_user_emails" BOOLEAN NOT NULL DEFAULT false;
