-- The authentication cache (src/db/auth-cache.ts) also holds each user's
-- user_settings.presence_enabled, which every presence ping asks (a user
-- without a settings row shares presence, the column's default). A committed
-- change to it is announced like a change to the user's own row: 'u:<user_id>'
-- on 'roost_row_change', at commit. Inserting or deleting a row announces only
-- when the row says presence is not shared, so creating users sends nothing.
-- Other settings are not cached there and announce nothing. Written by hand:
-- Prisma's schema does not model triggers.

CREATE OR REPLACE FUNCTION "roost_notify_presence_enabled_change"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('roost_row_change', 'u:' || OLD.user_id);
  END IF;
  IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.user_id <> OLD.user_id) THEN
    PERFORM pg_notify('roost_row_change', 'u:' || NEW.user_id);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "user_settings_presence_enabled_changed"
  AFTER UPDATE OF "presence_enabled", "user_id" ON "user_settings"
  FOR EACH ROW
  WHEN (OLD.presence_enabled IS DISTINCT FROM NEW.presence_enabled OR OLD.user_id <> NEW.user_id)
  EXECUTE FUNCTION "roost_notify_presence_enabled_change"();

CREATE TRIGGER "user_settings_presence_disabled_inserted"
  AFTER INSERT ON "user_settings"
  FOR EACH ROW
  WHEN (NEW.presence_enabled IS NOT TRUE)
  EXECUTE FUNCTION "roost_notify_presence_enabled_change"();

CREATE TRIGGER "user_settings_presence_disabled_deleted"
  AFTER DELETE ON "user_settings"
  FOR EACH ROW
  WHEN (OLD.presence_enabled IS NOT TRUE)
  EXECUTE FUNCTION "roost_notify_presence_enabled_change"();
