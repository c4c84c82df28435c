// The document behind `server_emoji_data_url`: upstream's
// `{"code_to_names": {…}}` for every Unicode emoji Roost accepts, at a URL
// that names its content's hash, so clients and caches may keep it forever.
import { createHash } from 'node:crypto'
import type { Realm } from '../db/index.js'
import { serverEmojiData } from '../domain/emoji.js'
import { realmUrl } from './realm.js'

/** The document's bytes, built once. */
export const SERVER_EMOJI_DATA_JSON: string = JSON.stringify(serverEmojiData())
const HASH = createHash('sha256').update(SERVER_EMOJI_DATA_JSON).digest('hex').slice(0, 16)

/** Its file name under /static/generated/emoji/. */
export const SERVER_EMOJI_DATA_FILE = `emoji_api.${HASH}.json`
export const SERVER_EMOJI_DATA_ETAG = `"${HASH}"`

/** Absolute, under the realm's URL (as upstream's is absolute under its static URL). */
export function serverEmojiDataUrl(realm: Pick<Realm, 'stringId'>, externalUrl: string): string {
  return `${realmUrl(realm, externalUrl)}/static/generated/emoji/${SERVER_EMOJI_DATA_FILE}`
}
