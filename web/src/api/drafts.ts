// Draft calls (the drafts API; used while the user's
// enable_drafts_synchronization setting is on, as upstream's web app does).
import type { WireDraft } from '../model/events.js'
import { call } from './client.js'

export type DraftFields = Omit<WireDraft, 'id'>

export const createDraft = (draft: DraftFields) => call<{ ids: number[] }>('POST', '/drafts', { drafts: [draft] }).then((r) => r.ids[0]!)
export const editDraft = (id: number, draft: DraftFields) => call('PATCH', `/drafts/${id}`, { draft })
export const deleteDraft = (id: number) => call('DELETE', `/drafts/${id}`)
