-- Cross-node invalidation of the authentication cache (src/db/auth-cache.ts).
-- Every committed change to a user or realm row is announced on the channel
-- 'roost_row_change' as 'u:<id>' or 'r:<id>'. NOTIFY is delivered at commit
-- (and never for a rolled-back transaction), so listeners evict only
-- committed changes. Written by hand: Prisma's schema does not model triggers.

CREATE OR REPLACE FUNCTION "roost_notify_row_change"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('roost_row_change', TG_ARGV[0] || ':' || OLD.id);
  IF TG_OP = 'UPDATE' AND NEW.id <> OLD.id THEN
    PERFORM pg_notify('roost_row_change', TG_ARGV[0] || ':' || NEW.id);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "user_profile_row_change"
  AFTER UPDATE OR DELETE ON "user_profile"
  FOR EACH ROW EXECUTE FUNCTION "roost_notify_row_change"('u');

CREATE TRIGGER "realm_row_change"
  AFTER UPDATE OR DELETE ON "realm"
  FOR EACH ROW EXECUTE FUNCTION "roost_notify_row_change"('r');
