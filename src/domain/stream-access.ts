// Who may see a channel and its messages (pure predicates).
import { isAdmin, isGuest } from './roles.js'

export interface AccessUser {
  role: number
}
export interface AccessStream {
  inviteOnly: boolean
  isWebPublic: boolean
}

/** May the user read the channel's messages (and post, policy permitting)? */
export function canAccessStreamContent(user: AccessUser, stream: AccessStream, subscribed: boolean): boolean {
  if (subscribed) return true
  if (stream.inviteOnly) return false
  if (isGuest(user.role)) return stream.isWebPublic
  return true
}

/** May the user know the channel exists (name, description, subscribers count)? Administrators see every channel. */
export function canSeeStreamMetadata(user: AccessUser, stream: AccessStream, subscribed: boolean): boolean {
  return canAccessStreamContent(user, stream, subscribed) || (stream.inviteOnly && isAdmin(user.role))
}
