// What the Notification Bot posts in a channel's "channel events" topic when
// an administrator changes the channel (upstream zerver/actions/streams.py:
// send_change_stream_permission_notification, do_rename_stream,
// send_change_stream_description_notification, …). Pure text.

export interface Actor {
  id: number
  fullName: string
}

export interface Privacy {
  inviteOnly: boolean
  historyPublicToSubscribers: boolean
  isWebPublic: boolean
}

const mention = (actor: Actor): string => `@_**${actor.fullName}|${actor.id}**`

/** Upstream's Stream.PERMISSION_POLICIES names. */
export function privacyPolicyName(p: Privacy): string {
  if (p.isWebPublic) return 'Web-public'
  if (!p.inviteOnly) return p.historyPublicToSubscribers ? 'Public' : 'Public, protected history'
  return p.historyPublicToSubscribers ? 'Private, shared history' : 'Private, protected history'
}

export function privacyChangedNotice(actor: Actor, before: Privacy, after: Privacy): string {
  return `${mention(actor)} changed the [access permissions](/help/channel-permissions) for this channel from **${privacyPolicyName(before)}** to **${privacyPolicyName(after)}**.`
}

/** A group-setting value as upstream's get_users_string_with_permission: its groups (by ID), then its users (by ID), silently mentioned. */
export interface SettingHolders {
  groups: { id: number; name: string }[]
  users: Actor[]
}
export function settingHoldersText(holders: SettingHolders): string {
  const groups = [...holders.groups].sort((a, b) => a.id - b.id).map((g) => `@_*${g.name}*`)
  const users = [...holders.users].sort((a, b) => a.id - b.id).map(mention)
  return [...groups, ...users].join(', ')
}

/** can_send_message_group changed (level 333; upstream's send_stream_posting_permission_update_notification). */
export function postingPermissionChangedNotice(actor: Actor, before: SettingHolders, after: SettingHolders): string {
  return (
    `${mention(actor)} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n` +
    `* **Old**: ${settingHoldersText(before)}\n` +
    `* **New**: ${settingHoldersText(after)}\n`
  )
}

export function renamedNotice(actor: Actor, oldName: string, newName: string): string {
  return `${mention(actor)} renamed channel **${oldName}** to **${newName}**.`
}

export function descriptionChangedNotice(actor: Actor, before: string, after: string): string {
  const shown = (d: string): string => (d === '' ? '*No description.*' : d)
  return (
    `${mention(actor)} changed the description for this channel.\n\n` +
    `* **Old description:**\n\`\`\`\` quote\n${shown(before)}\n\`\`\`\`\n` +
    `* **New description:**\n\`\`\`\` quote\n${shown(after)}\n\`\`\`\``
  )
}

/** null means "the organization's setting"; -1 means forever. */
export function retentionChangedNotice(actor: Actor, before: number | null, after: number | null, realmDays: number): string {
  const oldDays = before ?? realmDays
  const newDays = after ?? realmDays
  const period = (days: number): string => (days === -1 ? 'Forever' : `${days} days`)
  const summary =
    newDays === -1
      ? 'Messages in this channel will now be retained forever.'
      : `Messages in this channel will now be automatically deleted ${newDays} days after they are sent.`
  return (
    `${mention(actor)} has changed the [message retention period](/help/message-retention-policy) for this channel:\n` +
    `* **Old retention period**: ${period(oldDays)}\n` +
    `* **New retention period**: ${period(newDays)}\n\n` +
    summary
  )
}
