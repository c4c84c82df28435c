-- The permission settings of user groups (upstream levels 283, 301, 305, 308,
-- 324): who may manage a group, join it, leave it, add members to it and
-- remove members from it. NULL stands for the setting's default, role:nobody
-- on system groups; new groups always store a value.
ALTER TABLE "user_group" ADD COLUMN "can_add_members_group_id" INTEGER,
ADD COLUMN "can_join_group_id" INTEGER,
ADD COLUMN "can_leave_group_id" INTEGER,
ADD COLUMN "can_manage_group_id" INTEGER,
ADD COLUMN "can_remove_members_group_id" INTEGER;

ALTER TABLE "user_group" ADD CONSTRAINT "user_group_can_add_members_group_id_fkey" FOREIGN KEY ("can_add_members_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "user_group" ADD CONSTRAINT "user_group_can_join_group_id_fkey" FOREIGN KEY ("can_join_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "user_group" ADD CONSTRAINT "user_group_can_leave_group_id_fkey" FOREIGN KEY ("can_leave_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "user_group" ADD CONSTRAINT "user_group_can_manage_group_id_fkey" FOREIGN KEY ("can_manage_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "user_group" ADD CONSTRAINT "user_group_can_remove_members_group_id_fkey" FOREIGN KEY ("can_remove_members_group_id") REFERENCES "user_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Existing named groups get what upstream's migrations gave them: nobody may
-- manage, join or remove members (can_manage_all_groups still reaches them),
-- everyone in the group may leave it, and its own members may add members (the
-- 9.0 rule let direct members change their group).
UPDATE "user_group" g SET
  "can_manage_group_id" = n.id,
  "can_join_group_id" = n.id,
  "can_remove_members_group_id" = n.id,
  "can_leave_group_id" = e.id,
  "can_add_members_group_id" = g.id
FROM "user_group" n, "user_group" e
WHERE NOT g.is_system_group AND NOT g.is_anonymous
  AND n.realm_id = g.realm_id AND n.is_system_group AND n.name = 'role:nobody'
  AND e.realm_id = g.realm_id AND e.is_system_group AND e.name = 'role:everyone';
