// Muted users (upstream's help "Mute a user"): the user's own list, from
// register's muted_users and replaced whole by each muted_users event. The
// server marks their messages read; the app hides those messages behind a
// placeholder (message-row.svelte), leaves them out of notifications, sounds
// and typing notices, leaves direct conversations made only of muted users
// out of the direct message list and recent conversations, leaves muted
// users out of the people list and mention autocomplete, and names them
// "Muted user" among a message's recipients and a conversation's senders.
import type { State } from './state.js'

export function isUserMuted(state: State, userId: number): boolean {
  return state.mutedUsers.has(userId)
}

/** Whether every other member of a direct conversation (its dmKey) is muted; a conversation with oneself never is. */
export function isDmMuted(state: State, key: string): boolean {
  const ids = key.split(',').map(Number)
  return ids.every((id) => id !== state.selfId && state.mutedUsers.has(id))
}

/** The muted users, most recently muted first (as upstream's settings list them), with the date each was muted. */
export function mutedUsersList(state: State): { id: number; name: string; timestamp: number }[] {
  return [...state.mutedUsers]
    .map(([id, timestamp]) => ({ id, name: state.users.get(id)?.fullName ?? `#${id}`, timestamp }))
    .sort((a, b) => b.timestamp - a.timestamp || a.name.localeCompare(b.name))
}

/** Who is typing in a conversation (typingKey), as the compose box names them: neither oneself nor a muted user. */
export function typingUsers(state: State, key: string): number[] {
  return [...(state.typing.get(key) ?? [])].filter((id) => id !== state.selfId && !state.mutedUsers.has(id))
}
