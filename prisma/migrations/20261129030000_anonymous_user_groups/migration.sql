-- Anonymous user groups: the value of a group setting that names users and
-- groups rather than one named group (upstream's group-setting values).
ALTER TABLE "user_group" ADD COLUMN "is_anonymous" BOOLEAN NOT NULL DEFAULT false;
