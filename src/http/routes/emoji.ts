// Custom emoji: GET /realm/emoji, POST and DELETE /realm/emoji/{emoji_name};
// their images at /user_avatars/{realm_id}/emoji/images/{file} (outside
// /api/v1, as source_url names them); and the Unicode emoji names at
// server_emoji_data_url (no credentials, cached for good: the URL names the
// content's hash).
import { Type } from 'typebox'
import { route } from '../route.js'
import { addRealmEmoji, deactivateRealmEmoji } from '../../actions/realm-emoji.js'
import { getRealmEmoji, realmEmojiPath, realmEmojiStillPath } from '../../queries/realm-emoji.js'
import { SERVER_EMOJI_DATA_ETAG, SERVER_EMOJI_DATA_FILE, SERVER_EMOJI_DATA_JSON } from '../../present/emoji-data.js'
import { fileNotFound } from '../../errors.js'

const FOREVER = 'public, max-age=31536000, immutable'

/** Serves the image stored at `keyOf(realm, file)`, for file names of the form `fileName`, to anyone (as upstream). */
function emojiImageRoute(url: string, fileName: RegExp, keyOf: (realmId: number, file: string) => string) {
  return route({
    method: 'GET',
    url,
    outsideApi: true,
    raw: true,
    auth: 'none',
    params: { realm_id: Type.String(), file: Type.String() },
    handler: async (input, ctx) => {
      const file = input.realm_id === String(ctx.realm.id) && fileName.test(input.file) ? await ctx.storage.get(keyOf(ctx.realm.id, input.file)) : null
      if (!file) throw fileNotFound()
      ctx.reply
        .header('Content-Type', file.contentType)
        .header('Cache-Control', FOREVER)
        .header('X-Content-Type-Options', 'nosniff')
        .send(file.data)
    },
  })
}

export const routes = [
  route({
    method: 'GET',
    url: '/realm/emoji',
    handler: async (_input, ctx) => ({ emoji: await getRealmEmoji(ctx.prisma, ctx.realm.id) }),
  }),
  route({
    method: 'POST',
    url: '/realm/emoji/:emoji_name',
    params: { emoji_name: Type.String() },
    handler: async (input, ctx) => {
      await addRealmEmoji(ctx, input.emoji_name, ctx.files)
    },
  }),
  route({
    method: 'DELETE',
    url: '/realm/emoji/:emoji_name',
    params: { emoji_name: Type.String() },
    handler: async (input, ctx) => {
      await deactivateRealmEmoji(ctx, input.emoji_name)
    },
  }),
  // An emoji's image, and the still image of an animated one.
  emojiImageRoute('/user_avatars/:realm_id/emoji/images/:file', /^[0-9a-f]{24}\.(png|jpg|gif|webp)$/, realmEmojiPath),
  emojiImageRoute('/user_avatars/:realm_id/emoji/images/still/:file', /^[0-9a-f]{24}\.png$/, realmEmojiStillPath),
  route({
    method: 'GET',
    url: '/static/generated/emoji/:file',
    outsideApi: true,
    raw: true,
    auth: 'public',
    params: { file: Type.String() },
    handler: async (input, ctx) => {
      if (input.file !== SERVER_EMOJI_DATA_FILE) throw fileNotFound()
      ctx.reply
        .header('Content-Type', 'application/json')
        .header('Cache-Control', FOREVER)
        .header('ETag', SERVER_EMOJI_DATA_ETAG)
      if (ctx.request.headers['if-none-match'] === SERVER_EMOJI_DATA_ETAG) ctx.reply.code(304).send()
      else ctx.reply.send(SERVER_EMOJI_DATA_JSON)
    },
  }),
]
