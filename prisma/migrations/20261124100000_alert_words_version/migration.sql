-- CreateTable
CREATE TABLE "realm_alert_words_version" (
    "realm_id" INTEGER NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "realm_alert_words_version_pkey" PRIMARY KEY ("realm_id")
);


-- Any change to a user's alert words, by whatever path, makes every node's
-- cached alert-word matcher of the realm stale (queries/alert-word-matcher.ts).
CREATE FUNCTION "bump_realm_alert_words_version"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  uid integer;
BEGIN
  IF TG_OP = 'DELETE' THEN uid := OLD.user_id; ELSE uid := NEW.user_id; END IF;
  INSERT INTO "realm_alert_words_version" ("realm_id", "version")
    SELECT "realm_id", 1 FROM "user_profile" WHERE "id" = uid
  ON CONFLICT ("realm_id") DO UPDATE SET "version" = "realm_alert_words_version"."version" + 1;
  IF TG_OP = 'UPDATE' AND OLD.user_id <> NEW.user_id THEN
    INSERT INTO "realm_alert_words_version" ("realm_id", "version")
      SELECT "realm_id", 1 FROM "user_profile" WHERE "id" = OLD.user_id
    ON CONFLICT ("realm_id") DO UPDATE SET "version" = "realm_alert_words_version"."version" + 1;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "alert_word_bumps_realm_version" AFTER INSERT OR UPDATE OR DELETE ON "alert_word"
  FOR EACH ROW EXECUTE FUNCTION "bump_realm_alert_words_version"();
