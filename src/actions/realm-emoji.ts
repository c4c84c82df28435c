// Custom emoji (upstream views/realm_emoji.py, actions/realm_emoji.py):
// POST /realm/emoji/{emoji_name} adds one image under the realm's
// add_custom_emoji_policy, DELETE deactivates it (administrators, or its
// author). Both send everyone in the realm the whole `realm_emoji` dict.
import { holdsRealmPermission } from '../queries/realm-permissions.js'
import { randomBytes } from 'node:crypto'
import type { ActionContext, TxContext } from './context.js'
import { inTransaction, type Emit } from './context.js'
import type { Tx } from '../db/index.js'
import type { UploadedFile } from '../storage/file-storage.js'
import { isUniqueViolation } from '../db/errors.js'
import { isAdmin, isGuest } from '../domain/roles.js'
import { emojiCodeForName } from '../domain/emoji.js'
import { imageTypeOf } from './avatar.js'
import { activeUserIds } from '../queries/user-groups.js'
import { realmEmojiUpdateEvent } from '../events/schemas/index.js'
import { getRealmEmoji, realmEmojiPath, realmEmojiStillPath } from '../queries/realm-emoji.js'
import { firstFramePng, UndecodableImage } from '../storage/still-image.js'
import {
  botRequestsNotAccepted,
  customEmojiExists,
  customEmojiNotFound,
  emojiNameBadCharacters,
  emojiNameBadEnd,
  emojiNameMissing,
  emojiNameTooLong,
  exactlyOneFile,
  insufficientPermission,
  invalidImageFormat,
  mustBeAdminOrEmojiAuthor,
  notAllowedForGuests,
  onlyAdminsOverrideBuiltInEmoji,
  uploadTooLarge,
} from '../errors.js'

/** Upstream's MAX_EMOJI_FILE_SIZE_MIB default. */
export const MAX_EMOJI_FILE_SIZE_MIB = 5
export const MAX_EMOJI_NAME_LENGTH = 100
const MIB = 1024 * 1024
const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' }

/** Upstream check_valid_emoji_name, after spaces became underscores. */
export function checkCustomEmojiName(name: string): void {
  if (name === '') throw emojiNameMissing()
  if (name.length > MAX_EMOJI_NAME_LENGTH) throw emojiNameTooLong(MAX_EMOJI_NAME_LENGTH)
  if (/^[0-9a-z\-_]+(?<![-_])$/.test(name)) return
  if (/^[0-9a-z\-_]+$/.test(name)) throw emojiNameBadEnd()
  throw emojiNameBadCharacters()
}

/** Animated GIF (a looping extension or a second frame), APNG (acTL chunk) or animated WebP (VP8X flag). */
export function isAnimatedImage(data: Buffer, type: string): boolean {
  if (type === 'image/gif') {
    // A looping application extension, or a second graphic control extension (one per frame).
    const frameControl = Buffer.from([0x21, 0xf9, 0x04])
    const first = data.indexOf(frameControl)
    return data.includes('NETSCAPE2.0') || (first !== -1 && data.indexOf(frameControl, first + 1) !== -1)
  }
  if (type === 'image/png') {
    const idat = data.indexOf('IDAT')
    const actl = data.indexOf('acTL')
    return actl !== -1 && (idat === -1 || actl < idat)
  }
  if (type === 'image/webp') return data.subarray(12, 16).toString('latin1') === 'VP8X' && data.length > 20 && (data[20] & 0x02) !== 0
  return false
}

async function stillOf(data: Buffer): Promise<Buffer> {
  try {
    return await firstFramePng(data)
  } catch (error) {
    if (error instanceof UndecodableImage) throw invalidImageFormat()
    throw error
  }
}

async function notifyRealmEmoji(ctx: TxContext, tx: Tx, emit: Emit): Promise<void> {
  emit(realmEmojiUpdateEvent(await getRealmEmoji(tx, ctx.realm.id)), await activeUserIds(tx, ctx.realm.id))
}

export async function addRealmEmoji(ctx: ActionContext, rawName: string, files: UploadedFile[]): Promise<void> {
  if (isGuest(ctx.user.role)) throw notAllowedForGuests()
  if (ctx.user.isBot) throw botRequestsNotAccepted()
  const name = rawName.trim().replace(/ /g, '_')
  checkCustomEmojiName(name)
  if (!(await holdsRealmPermission(ctx.prisma, ctx.realm, ctx.user, 'can_add_custom_emoji_group', ctx.now()))) throw insufficientPermission()
  const taken = await ctx.prisma.realmEmoji.findFirst({ where: { realmId: ctx.realm.id, name, deactivated: false }, select: { id: true } })
  if (taken) throw customEmojiExists()
  if (files.length !== 1) throw exactlyOneFile()
  if (emojiCodeForName(name) !== undefined && !isAdmin(ctx.user.role)) throw onlyAdminsOverrideBuiltInEmoji()
  const file = files[0] as UploadedFile
  if (file.data.length > MAX_EMOJI_FILE_SIZE_MIB * MIB) throw uploadTooLarge(MAX_EMOJI_FILE_SIZE_MIB)
  const type = imageTypeOf(file.data)
  if (!type) throw invalidImageFormat()

  const isAnimated = isAnimatedImage(file.data, type)
  // Decoded before anything is stored: an image that cannot be read is refused whole.
  const still = isAnimated ? await stillOf(file.data) : null

  const fileName = `${randomBytes(12).toString('hex')}.${EXTENSIONS[type]}`
  const keys = [realmEmojiPath(ctx.realm.id, fileName)]
  await ctx.storage.put(keys[0] as string, file.data, type)
  try {
    if (still) {
      keys.push(realmEmojiStillPath(ctx.realm.id, fileName))
      await ctx.storage.put(keys[1] as string, still, 'image/png')
    }
    await inTransaction(ctx, async (tx, emit) => {
      await tx.realmEmoji.create({ data: { realmId: ctx.realm.id, name, fileName, authorId: ctx.user.id, isAnimated } })
      await notifyRealmEmoji(ctx, tx, emit)
    })
  } catch (error) {
    for (const key of keys) await ctx.storage.delete(key)
    if (isUniqueViolation(error)) throw customEmojiExists()
    throw error
  }
}

export async function deactivateRealmEmoji(ctx: ActionContext, name: string): Promise<void> {
  const emoji = await ctx.prisma.realmEmoji.findFirst({ where: { realmId: ctx.realm.id, name, deactivated: false } })
  if (!emoji) throw customEmojiNotFound(name)
  if (!isAdmin(ctx.user.role) && emoji.authorId !== ctx.user.id) throw mustBeAdminOrEmojiAuthor()
  await inTransaction(ctx, async (tx, emit) => {
    const changed = await tx.realmEmoji.updateMany({ where: { id: emoji.id, deactivated: false }, data: { deactivated: true } })
    if (changed.count === 0) throw customEmojiNotFound(name)
    await notifyRealmEmoji(ctx, tx, emit)
  })
}
