-- A channel's newest messages (GET /messages narrowed to a channel, the
-- mobile app's first screen of a channel) read backwards from this index;
-- without it PostgreSQL read every message of the channel, or of the
-- organization, to find the newest 50.
-- CreateIndex
CREATE INDEX "message_stream_id_id_idx" ON "message"("stream_id", "id");
