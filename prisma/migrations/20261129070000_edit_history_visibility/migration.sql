-- Which edit history members may see (upstream level 358): 1 all, 2 moves only, 3 none.
-- It replaces allow_edit_history (true: all, false: none). The old column
-- stays, no longer read or written, so that nodes of the previous version
-- keep working during a rolling upgrade; a later migration drops it.
ALTER TABLE "realm" ADD COLUMN "message_edit_history_visibility_policy" INTEGER NOT NULL DEFAULT 1;
UPDATE "realm" SET "message_edit_history_visibility_policy" = 3 WHERE NOT "allow_edit_history";
