-- Cross-node invalidation of the per-user data cache (src/db/user-data-cache.ts):
-- what GET /users/me reads besides the user row, i.e. the user's newest
-- received message (user_message) and custom profile values. Every committed
-- change is announced on the channel 'roost_user_data' with the affected
-- user IDs, comma-separated, or '*' for all users (too many IDs for one
-- payload, or a change to a field definition). NOTIFY is delivered at commit,
-- never for a rolled-back transaction, and identical payloads of one
-- transaction are delivered once. Written by hand: Prisma's schema does not
-- model triggers.

-- One notification per statement on user_message, the IDs taken from its
-- transition table. Only inserts and deletes move a user's newest message;
-- flag updates (reading, starring) do not fire.
--
-- Except for a send's insert. A transaction that NOTIFYs holds a lock shared
-- by the whole database cluster from its commit until the commit is flushed
-- to disk: sends that notified from their own transaction would commit one
-- at a time (measured with pgbench, 10 writers: a quarter of the commits per
-- second). So the send's statement sets 'roost.user_data_notify' to 'sender'
-- for its transaction (src/db/send-queries.ts), this trigger then stays
-- silent (and clears the mark for any later statement), and the sending node
-- announces the recipients itself in a statement of its own right after the
-- commit (notifyUserDataChanged).
CREATE OR REPLACE FUNCTION "roost_notify_user_messages"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  ids text;
BEGIN
  IF TG_OP = 'INSERT' AND current_setting('roost.user_data_notify', true) = 'sender' THEN
    PERFORM set_config('roost.user_data_notify', '', true);
    RETURN NULL;
  END IF;
  SELECT string_agg(DISTINCT "user_id"::text, ',') INTO ids FROM "changed_rows";
  IF ids IS NULL THEN
    RETURN NULL;
  END IF;
  -- NOTIFY payloads must stay under 8,000 bytes.
  IF length(ids) > 7000 THEN
    ids := '*';
  END IF;
  PERFORM pg_notify('roost_user_data', ids);
  RETURN NULL;
END
$$;

CREATE TRIGGER "user_message_inserted"
  AFTER INSERT ON "user_message"
  REFERENCING NEW TABLE AS "changed_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "roost_notify_user_messages"();

CREATE TRIGGER "user_message_deleted"
  AFTER DELETE ON "user_message"
  REFERENCING OLD TABLE AS "changed_rows"
  FOR EACH STATEMENT EXECUTE FUNCTION "roost_notify_user_messages"();

-- A profile value names its user.
CREATE OR REPLACE FUNCTION "roost_notify_profile_value"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('roost_user_data', OLD."user_id"::text);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('roost_user_data', NEW."user_id"::text);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "custom_profile_field_value_changed"
  AFTER INSERT OR UPDATE OR DELETE ON "custom_profile_field_value"
  FOR EACH ROW EXECUTE FUNCTION "roost_notify_profile_value"();

-- A field's definition (its type) is part of every value read with it.
CREATE OR REPLACE FUNCTION "roost_notify_all_user_data"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('roost_user_data', '*');
  RETURN NULL;
END
$$;

CREATE TRIGGER "custom_profile_field_changed"
  AFTER UPDATE OR DELETE ON "custom_profile_field"
  FOR EACH STATEMENT EXECUTE FUNCTION "roost_notify_all_user_data"();
