-- Whether clients warn when a direct message has a guest among its recipients (upstream level 348).
ALTER TABLE "realm" ADD COLUMN "enable_guest_user_dm_warning" BOOLEAN NOT NULL DEFAULT true;
