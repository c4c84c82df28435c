// POST /messages/flags/narrow (level 155; upstream-behaviour §4): the
// messages GET /messages would return for the same window, with the range
// clamped to MAX_MESSAGES_PER_UPDATE, then the ordinary flag update.
import type { ActionContext } from './context.js'
import { badRequest } from '../errors.js'
import { getMessageIds } from '../queries/messages.js'
import { updateMessageFlags } from './update-message-flags.js'
import { parseFlagOperation } from '../domain/flags.js'

/** Upstream's MAX_MESSAGES_PER_UPDATE. */
export const MAX_MESSAGES_PER_UPDATE = 5000

export interface UpdateFlagsForNarrowInput {
  anchor: string
  includeAnchor: boolean
  numBefore: number
  numAfter: number
  narrow: unknown
  op: string
  flag: string
}

export interface UpdateFlagsForNarrowResult {
  processed_count: number
  updated_count: number
  first_processed_id: number | null
  last_processed_id: number | null
  found_oldest: boolean
  found_newest: boolean
  /** Level 355: only when marking as unread. */
  ignored_because_not_subscribed_channels?: number[]
}

/** The window the server actually processes: at most 5000 messages, at least half of them before the anchor when asked. */
export function clampRange(numBefore: number, numAfter: number): { numBefore: number; numAfter: number } {
  const before = Math.min(numBefore, Math.max(MAX_MESSAGES_PER_UPDATE - numAfter, MAX_MESSAGES_PER_UPDATE / 2))
  return { numBefore: before, numAfter: Math.min(numAfter, MAX_MESSAGES_PER_UPDATE - before) }
}

export async function updateFlagsForNarrow(ctx: ActionContext, input: UpdateFlagsForNarrowInput): Promise<UpdateFlagsForNarrowResult> {
  parseFlagOperation(input.flag, input.op)
  if (input.numBefore > 0 && input.numAfter > 0 && !input.includeAnchor) throw badRequest('The anchor can only be excluded at an end of the range')
  const range = clampRange(input.numBefore, input.numAfter)
  const window = await getMessageIds(ctx, {
    anchor: input.anchor,
    numBefore: range.numBefore,
    numAfter: range.numAfter,
    includeAnchor: input.includeAnchor,
    narrow: input.narrow,
  })
  const ids = window.ids
  const updated = await updateMessageFlags(ctx, { messages: ids, op: input.op, flag: input.flag })
  return {
    processed_count: ids.length,
    updated_count: updated.changed,
    first_processed_id: ids[0] ?? null,
    last_processed_id: ids[ids.length - 1] ?? null,
    found_oldest: window.found_oldest,
    found_newest: window.found_newest,
    ...(updated.ignoredBecauseNotSubscribedChannels !== undefined ? { ignored_because_not_subscribed_channels: updated.ignoredBecauseNotSubscribedChannels } : {}),
  }
}
