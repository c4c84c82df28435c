-- Which edit history members may see (upstream level 358): 1 all, 2 moves only, 3 none.
-- It replaces allow_edit_history (true: all, false: none).
ALTER TABLE "realm" ADD COLUMN "message_edit_history_visibility_policy" INTEGER NOT NULL DEFAULT 1;
UPDATE "realm" SET "message_edit_history_visibility_policy" = 3 WHERE NOT "allow_edit_history";
ALTER TABLE "realm" DROP COLUMN "allow_edit_history";
