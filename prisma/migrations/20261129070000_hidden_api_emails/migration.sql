-- A person whose email_address_visibility is not "everyone" (1) is known to the
-- API by the stand-in user{id}@{domain}, not by the real address (upstream
-- get_display_email_address). Existing rows kept the real address; this
-- rewrites them. The domain is the realm's fakeEmailDomain, read back from its
-- notification bot's address, which was made from it when the realm was
-- created. A stand-in that another account of the realm already has as its
-- API email is left alone (the unique index on lower(email) forbids it).
UPDATE "user_profile" AS u
SET "email" = 'user' || u."id" || '@' || split_part(bot."email", '@', 2)
FROM "user_settings" AS s, "realm" AS r, "user_profile" AS bot
WHERE s."user_id" = u."id"
  AND s."email_address_visibility" <> 1
  AND NOT u."is_bot"
  AND r."id" = u."realm_id"
  AND bot."id" = r."notification_bot_id"
  AND lower(u."email") <> lower('user' || u."id" || '@' || split_part(bot."email", '@', 2))
  AND NOT EXISTS (
    SELECT 1 FROM "user_profile" AS other
    WHERE other."realm_id" = u."realm_id"
      AND other."id" <> u."id"
      AND lower(other."email") = lower('user' || u."id" || '@' || split_part(bot."email", '@', 2))
  );
