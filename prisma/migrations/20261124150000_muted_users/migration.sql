-- CreateTable
CREATE TABLE "muted_user" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "muted_user_id" INTEGER NOT NULL,
    "date_muted" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "muted_user_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "muted_user_muted_user_id_idx" ON "muted_user"("muted_user_id");

-- CreateIndex
CREATE UNIQUE INDEX "muted_user_user_id_muted_user_id_key" ON "muted_user"("user_id", "muted_user_id");

-- AddForeignKey
ALTER TABLE "muted_user" ADD CONSTRAINT "muted_user_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "muted_user" ADD CONSTRAINT "muted_user_muted_user_id_fkey" FOREIGN KEY ("muted_user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

