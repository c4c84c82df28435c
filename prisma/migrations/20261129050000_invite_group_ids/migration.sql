-- Level 322: the user groups an invitation's user joins on accepting it.
ALTER TABLE "invitation" ADD COLUMN "group_ids" INTEGER[] DEFAULT ARRAY[]::INTEGER[];
ALTER TABLE "multiuse_invite" ADD COLUMN "group_ids" INTEGER[] DEFAULT ARRAY[]::INTEGER[];
