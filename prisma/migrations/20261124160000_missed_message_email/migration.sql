-- CreateTable
CREATE TABLE "missed_message_email" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "trigger" TEXT NOT NULL,
    "conversation" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "claimed_by" TEXT,
    "claim_expires_at" TIMESTAMPTZ(3),

    CONSTRAINT "missed_message_email_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "missed_message_email_due_at_idx" ON "missed_message_email"("due_at");

-- CreateIndex
CREATE INDEX "missed_message_email_message_id_idx" ON "missed_message_email"("message_id");

-- CreateIndex
CREATE UNIQUE INDEX "missed_message_email_user_id_message_id_key" ON "missed_message_email"("user_id", "message_id");

-- AddForeignKey
ALTER TABLE "missed_message_email" ADD CONSTRAINT "missed_message_email_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "missed_message_email" ADD CONSTRAINT "missed_message_email_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;
