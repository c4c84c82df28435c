-- CreateTable
CREATE TABLE "push_device" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "kind" INTEGER NOT NULL,
    "token" TEXT NOT NULL,
    "app_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "push_device_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "push_device_user_id_idx" ON "push_device"("user_id");

-- AddForeignKey
ALTER TABLE "push_device" ADD CONSTRAINT "push_device_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Hand-written (Prisma cannot express them):
-- one registration per user, kind and token;
CREATE UNIQUE INDEX "push_device_user_kind_token_key" ON "push_device"("user_id", "kind", md5("token"));
-- one active custom emoji per name in a realm (deactivated ones keep their names).
CREATE UNIQUE INDEX "realm_emoji_active_name_key" ON "realm_emoji"("realm_id", "name") WHERE NOT "deactivated";
