// POST /users/me/avatar (one image, stored through ctx.storage; avatar_source
// "U") and DELETE /users/me/avatar (back to the externally hosted "G"
// avatar). Each bumps avatar_version and sends the realm_user update avatar
// form to those who can access the user. Files are stored as uploaded (no
// resizing library ships with Roost), so the medium URL serves the same file.
import { randomBytes } from 'node:crypto'
import type { ActionContext } from './context.js'
import { inTransaction } from './context.js'
import type { StoredFile } from '../storage/file-storage.js'
import type { UploadedFile } from '../storage/file-storage.js'
import type { User } from '../db/index.js'
import { avatarUrl, avatarUrlMedium } from '../present/user.js'
import { usersWhoCanAccess } from '../presence/audience.js'
import { isAdmin } from '../domain/roles.js'
import { avatarChangesDisabled, exactlyOneAvatar, notAnImage, uploadTooLarge } from '../errors.js'
import { realmUserUpdateEvent, type PersonUpdate } from '../events/schemas/index.js'

/** Upstream's max_avatar_file_size_mib default. */
export const MAX_AVATAR_FILE_SIZE_MIB = 5
const MIB = 1024 * 1024

type AvatarUser = Pick<User, 'id' | 'realmId' | 'avatarSource' | 'avatarHash' | 'avatarVersion' | 'deliveryEmail'>

/** The image type the bytes announce, or undefined for anything that is not a PNG, JPEG, GIF or WebP image. */
export function imageTypeOf(data: Buffer): string | undefined {
  if (data.length >= 8 && data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png'
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg'
  const head = data.subarray(0, 6).toString('latin1')
  if (head === 'GIF87a' || head === 'GIF89a') return 'image/gif'
  if (data.length >= 12 && data.subarray(0, 4).toString('latin1') === 'RIFF' && data.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp'
  return undefined
}

export const avatarStorageKey = (realmId: number, hash: string): string => `${realmId}/avatars/${hash}`

export function avatarPerson(user: AvatarUser): PersonUpdate {
  return {
    user_id: user.id,
    avatar_source: user.avatarSource,
    avatar_url: avatarUrl(user),
    avatar_url_medium: avatarUrlMedium(user),
    avatar_version: user.avatarVersion,
  }
}

function checkAvatarChangesAllowed(ctx: ActionContext): void {
  if (ctx.realm.avatarChangesDisabled && !isAdmin(ctx.user.role)) throw avatarChangesDisabled()
}

async function setAvatar(ctx: ActionContext, source: 'G' | 'U', hash: string | null): Promise<User> {
  const before = ctx.user.avatarHash
  const user = await inTransaction(ctx, async (tx, emit) => {
    const row = await tx.user.update({ where: { id: ctx.user.id }, data: { avatarSource: source, avatarHash: hash, avatarVersion: { increment: 1 } } })
    emit(realmUserUpdateEvent(avatarPerson(row)), await usersWhoCanAccess(tx, ctx.realm, row.id))
    return row
  })
  if (before && before !== hash) await ctx.storage.delete(avatarStorageKey(ctx.realm.id, before))
  return user
}

export async function uploadAvatar(ctx: ActionContext, files: UploadedFile[]): Promise<{ avatar_url: string }> {
  checkAvatarChangesAllowed(ctx)
  if (files.length !== 1) throw exactlyOneAvatar()
  const file = files[0] as UploadedFile
  if (file.data.length > MAX_AVATAR_FILE_SIZE_MIB * MIB) throw uploadTooLarge(MAX_AVATAR_FILE_SIZE_MIB)
  const type = imageTypeOf(file.data)
  if (!type) throw notAnImage()
  const hash = randomBytes(20).toString('hex')
  await ctx.storage.put(avatarStorageKey(ctx.realm.id, hash), file.data, type)
  try {
    return { avatar_url: avatarUrl(await setAvatar(ctx, 'U', hash)) }
  } catch (error) {
    await ctx.storage.delete(avatarStorageKey(ctx.realm.id, hash))
    throw error
  }
}

export async function removeAvatar(ctx: ActionContext): Promise<{ avatar_url: string }> {
  checkAvatarChangesAllowed(ctx)
  return { avatar_url: avatarUrl(await setAvatar(ctx, 'G', null)) }
}

/** The uploaded avatar named `{hash}.png` or `{hash}-medium.png` of a user of the realm, or null. */
export async function readAvatar(ctx: Pick<ActionContext, 'prisma' | 'storage'> & { realm: { id: number } }, fileName: string): Promise<StoredFile | null> {
  const match = /^([0-9a-f]{40})(?:-medium)?\.png$/.exec(fileName)
  if (!match) return null
  const hash = match[1] as string
  const owner = await ctx.prisma.user.findFirst({ where: { realmId: ctx.realm.id, avatarSource: 'U', avatarHash: hash }, select: { id: true } })
  if (!owner) return null
  return ctx.storage.get(avatarStorageKey(ctx.realm.id, hash))
}
