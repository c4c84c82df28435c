-- Browser login sessions (docs/web-sessions.md): the SHA-256 of each cookie's
-- token, its CSRF token, and the times the idle and absolute lifetimes run from.
-- CreateTable
CREATE TABLE "web_session" (
    "id" SERIAL NOT NULL,
    "token_hash" VARCHAR(64) NOT NULL,
    "user_id" INTEGER NOT NULL,
    "csrf_token" VARCHAR(64) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "web_session_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "web_session_token_hash_key" ON "web_session"("token_hash");

-- CreateIndex
CREATE INDEX "web_session_user_id_idx" ON "web_session"("user_id");

-- AddForeignKey
ALTER TABLE "web_session" ADD CONSTRAINT "web_session_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;

