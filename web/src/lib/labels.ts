// How the views name people and conversations: oneself as "you", others by
// their full name (their ID when unknown), a channel conversation as
// `#channel › topic`.
import type { State } from '../model/state.js'
import { t } from './strings.js'

export const personName = (state: State, id: number): string => (id === state.selfId ? t.you : state.users.get(id)?.fullName ?? `#${id}`)

/** A direct conversation by its people; a channel one by its channel and topic (the channel alone without a topic, `noRecipient` without a channel). */
export function conversationLabel(state: State, to: { userIds: number[] } | { streamId: number | undefined; topic?: string }): string {
  if ('userIds' in to) return to.userIds.map((id) => personName(state, id)).join(', ')
  if (to.streamId === undefined) return t.noRecipient
  const channel = `#${state.subscriptions.get(to.streamId)?.name ?? to.streamId}`
  return to.topic ? `${channel} › ${to.topic}` : channel
}
