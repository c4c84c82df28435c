-- Saved snippets (GET/POST /saved_snippets, PATCH/DELETE /saved_snippets/{id}):
-- a user's reusable message texts, each with a title.
-- CreateTable
CREATE TABLE "saved_snippet" (
    "id" SERIAL NOT NULL,
    "user_id" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "date_created" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "saved_snippet_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "saved_snippet_user_id_idx" ON "saved_snippet"("user_id");

-- AddForeignKey
ALTER TABLE "saved_snippet" ADD CONSTRAINT "saved_snippet_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user_profile"("id") ON DELETE CASCADE ON UPDATE CASCADE;
