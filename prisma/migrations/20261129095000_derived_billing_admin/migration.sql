-- Upstream level 363: the spec's is_billing_admin is derived from the
-- organization's can_manage_billing_group (src/queries/billing-admins.ts), so
-- the stored flag goes. Only imports set it; the active human users who have
-- it keep their standing by joining the setting's value, as upstream's own
-- migration did: an anonymous value gains them as direct members; a named
-- group (or the empty column, meaning role:administrators) becomes an
-- anonymous group of them with that group as its subgroup.
DO $$
DECLARE
  rec record;
  gid int;
BEGIN
  FOR rec IN
    SELECT r.id AS realm_id,
      coalesce(r.can_manage_billing_group_id,
        (SELECT g.id FROM user_group g WHERE g.realm_id = r.id AND g.is_system_group AND g.name = 'role:administrators')) AS current_id
    FROM realm r
    WHERE EXISTS (SELECT 1 FROM user_profile u WHERE u.realm_id = r.id AND u.is_billing_admin AND u.is_active AND NOT u.is_bot)
      AND NOT EXISTS (SELECT 1 FROM user_group g WHERE g.id = r.can_manage_billing_group_id AND g.is_anonymous)
  LOOP
    INSERT INTO user_group (realm_id, name, is_anonymous) VALUES (rec.realm_id, '@anonymous:' || gen_random_uuid(), true) RETURNING id INTO gid;
    IF rec.current_id IS NOT NULL THEN
      INSERT INTO user_group_subgroup (supergroup_id, subgroup_id) VALUES (gid, rec.current_id);
    END IF;
    UPDATE realm SET can_manage_billing_group_id = gid WHERE id = rec.realm_id;
  END LOOP;
END
$$;

INSERT INTO user_group_member (group_id, user_id)
SELECT r.can_manage_billing_group_id, u.id
FROM user_profile u JOIN realm r ON r.id = u.realm_id JOIN user_group g ON g.id = r.can_manage_billing_group_id AND g.is_anonymous
WHERE u.is_billing_admin AND u.is_active AND NOT u.is_bot
ON CONFLICT DO NOTHING;

ALTER TABLE "user_profile" DROP COLUMN "is_billing_admin";

-- GET /users/me caches its rows per user (src/db/user-data-cache.ts), and
-- they now include is_billing_admin: announce the changes that can move it
-- on 'roost_user_data' (as *_user_data_invalidation does). A membership row
-- names its user (a group's deletion takes its rows with it); a subgroup
-- edge or a new value of the setting can move anyone.
CREATE OR REPLACE FUNCTION "roost_notify_group_members"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  ids text;
BEGIN
  SELECT string_agg(DISTINCT "user_id"::text, ',') INTO ids FROM "changed_rows";
  IF ids IS NULL THEN
    RETURN NULL;
  END IF;
  IF length(ids) > 7000 THEN
    ids := '*';
  END IF;
  PERFORM pg_notify('roost_user_data', ids);
  RETURN NULL;
END
$$;

CREATE TRIGGER "user_group_member_inserted"
  AFTER INSERT ON "user_group_member"
  REFERENCING NEW TABLE AS "changed_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "roost_notify_group_members"();

CREATE TRIGGER "user_group_member_deleted"
  AFTER DELETE ON "user_group_member"
  REFERENCING OLD TABLE AS "changed_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "roost_notify_group_members"();

-- Statement triggers fire for statements that touch no row too: only edges that changed count.
CREATE OR REPLACE FUNCTION "roost_notify_group_edges"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM "changed_rows") THEN
    PERFORM pg_notify('roost_user_data', '*');
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "user_group_subgroup_inserted"
  AFTER INSERT ON "user_group_subgroup"
  REFERENCING NEW TABLE AS "changed_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "roost_notify_group_edges"();

CREATE TRIGGER "user_group_subgroup_deleted"
  AFTER DELETE ON "user_group_subgroup"
  REFERENCING OLD TABLE AS "changed_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "roost_notify_group_edges"();

CREATE TRIGGER "realm_billing_group_changed"
  AFTER UPDATE OF "can_manage_billing_group_id" ON "realm"
  FOR EACH ROW WHEN (OLD."can_manage_billing_group_id" IS DISTINCT FROM NEW."can_manage_billing_group_id")
  EXECUTE FUNCTION "roost_notify_all_user_data"();
