// Who may see a channel and its messages (pure predicates). Besides
// subscriptions, roles and the channel's privacy, a user's groups may grant
// access to a private channel (upstream levels 349 and 354): membership of
// can_administer_channel_group, can_add_subscribers_group or
// can_subscribe_group shows its metadata; of the last two, its content too.
// None of these settings accepts role:everyone, so guests never hold them.
import { isAdmin, isGuest } from './roles.js'

export interface AccessUser {
  role: number
}
export interface AccessStream {
  inviteOnly: boolean
  isWebPublic: boolean
}

/** The channel's groups that grant access (null: the setting's default, role:nobody). */
export interface GrantingGroups {
  canAdministerChannelGroupId: number | null
  canAddSubscribersGroupId: number | null
  canSubscribeGroupId: number | null
}

/** What a user's groups grant on a channel. */
export interface GroupGrants {
  metadata: boolean
  content: boolean
  /** In can_administer_channel_group (realm administrators administer every channel anyway). */
  administer: boolean
  /** In can_add_subscribers_group (level 342). */
  addSubscribers: boolean
}

export const NO_GRANTS: GroupGrants = { metadata: false, content: false, administer: false, addSubscribers: false }

/** The grants of a user whose recursive group IDs are `userGroupIds` (upstream's has_metadata_access_to_channel_via_groups). */
export function groupGrants(user: AccessUser, stream: GrantingGroups, userGroupIds: ReadonlySet<number>): GroupGrants {
  if (isGuest(user.role)) return NO_GRANTS
  const holds = (id: number | null) => id !== null && userGroupIds.has(id)
  const addSubscribers = holds(stream.canAddSubscribersGroupId)
  const content = addSubscribers || holds(stream.canSubscribeGroupId)
  const administer = holds(stream.canAdministerChannelGroupId)
  return { metadata: content || administer, content, administer, addSubscribers }
}

/**
 * Level 342: may the user subscribe others to a channel it may read? Holders of the realm's
 * can_add_subscribers_group may for every such channel; administrators of the channel
 * (organization administrators included) and members of its can_add_subscribers_group for this one.
 */
export function canAddSubscribersTo(user: AccessUser, grants: GroupGrants, holdsRealmSetting: boolean): boolean {
  return holdsRealmSetting || isAdmin(user.role) || grants.administer || grants.addSubscribers
}

/** May the user read the channel's messages (and post, policy permitting)? */
export function canAccessStreamContent(user: AccessUser, stream: AccessStream, subscribed: boolean, grants: GroupGrants = NO_GRANTS): boolean {
  if (subscribed) return true
  if (isGuest(user.role)) return stream.isWebPublic
  if (!stream.inviteOnly) return true
  return grants.content
}

/** May the user know the channel exists (name, description, subscribers)? Administrators see every channel. */
export function canSeeStreamMetadata(user: AccessUser, stream: AccessStream, subscribed: boolean, grants: GroupGrants = NO_GRANTS): boolean {
  return canAccessStreamContent(user, stream, subscribed, grants) || (stream.inviteOnly && (isAdmin(user.role) || grants.metadata))
}
