// POST /users/me/presence: the user's report, and (unless ping_only) what
// changed in everyone's presence since last_update_id.
import type { PresenceAnswer } from '../model/presence.js'
import { call } from './client.js'

export interface PresenceReport { status: 'active' | 'idle'; pingOnly: boolean; newUserInput: boolean; lastUpdateId: number }

export const reportPresence = (r: PresenceReport) =>
  call<PresenceAnswer>('POST', '/users/me/presence', { status: r.status, ping_only: r.pingOnly, new_user_input: r.newUserInput, last_update_id: r.lastUpdateId })
