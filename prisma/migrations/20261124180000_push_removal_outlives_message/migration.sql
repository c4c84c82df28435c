-- A removal notice must outlive its message (deleting a pushed message queues
-- one), so missed_push_notification no longer references message; the
-- deletion removes the message's pending pushes itself.
-- DropForeignKey
ALTER TABLE "missed_push_notification" DROP CONSTRAINT "missed_push_notification_message_id_fkey";
