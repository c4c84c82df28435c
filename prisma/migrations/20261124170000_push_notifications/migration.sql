-- CreateTable
CREATE TABLE "missed_push_notification" (
    "id" SERIAL NOT NULL,
    "realm_id" INTEGER NOT NULL,
    "user_id" INTEGER NOT NULL,
    "message_id" INTEGER NOT NULL,
    "trigger" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "claimed_by" TEXT,
    "claim_expires_at" TIMESTAMPTZ(3),

    CONSTRAINT "missed_push_notification_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "web_push_subscription" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "endpoint" TEXT NOT NULL,
    "p256dh" TEXT NOT NULL,
    "auth" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "web_push_subscription_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "missed_push_notification_due_at_idx" ON "missed_push_notification"("due_at");

-- CreateIndex
CREATE INDEX "missed_push_notification_message_id_idx" ON "missed_push_notification"("message_id");

-- CreateIndex
CREATE UNIQUE INDEX "missed_push_notification_user_id_message_id_key" ON "missed_push_notification"("user_id", "message_id");

-- CreateIndex
CREATE UNIQUE INDEX "web_push_subscription_user_id_endpoint_key" ON "web_push_subscription"("user_id", "endpoint");

-- AddForeignKey
ALTER TABLE "missed_push_notification" ADD CONSTRAINT "missed_push_notification_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "missed_push_notification" ADD CONSTRAINT "missed_push_notification_message_id_fkey" FOREIGN KEY ("message_id") REFERENCES "message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "web_push_subscription" ADD CONSTRAINT "web_push_subscription_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;
