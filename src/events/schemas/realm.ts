// Organization events: realm settings (update, update_dict), deactivation, default
// channels, linkifiers (with the legacy empty realm_filters companion).
import { builder } from './built.js'
import { Type, type Static } from 'typebox'
import { eventObject, GroupSettingValueSchema, StreamDict } from './common.js'

export { GroupSettingValueSchema }
const SettingValue = Type.Union([Type.Boolean(), Type.Integer(), Type.String(), Type.Null()])

export const RealmEventSchema = Type.Union([
  eventObject({ type: Type.Literal('realm'), op: Type.Literal('update'), property: Type.String(), value: SettingValue }),
  eventObject({
    type: Type.Literal('realm'),
    op: Type.Literal('update_dict'),
    property: Type.Literal('default'),
    data: Type.Record(Type.String(), Type.Union([SettingValue, GroupSettingValueSchema, Type.Object({}, { additionalProperties: true })])),
  }),
  /** The organization was deactivated: flushes held long-polls; the next request is refused (REALM_DEACTIVATED). */
  eventObject({ type: Type.Literal('realm'), op: Type.Literal('deactivated'), realm_id: Type.Integer() }),
])
export type RealmEvent = Static<typeof RealmEventSchema>
export const realmUpdateEvent = builder((property: string, value: boolean | number | string | null): RealmEvent => ({ type: 'realm', op: 'update', property, value }))
export const realmDeactivatedEvent = builder((realmId: number): RealmEvent => ({ type: 'realm', op: 'deactivated', realm_id: realmId }))
export const realmUpdateDictEvent = builder((data: Record<string, boolean | number | string | null | Static<typeof GroupSettingValueSchema>>): RealmEvent => ({ type: 'realm', op: 'update_dict', property: 'default', data }))

/** Level 330: the default channels by ID, ascending. */
export const DefaultStreamsEventSchema = eventObject({ type: Type.Literal('default_streams'), default_streams: Type.Array(Type.Integer()) })
export type DefaultStreamsEvent = Static<typeof DefaultStreamsEventSchema>
export const defaultStreamsEvent = builder((streamIds: number[]): DefaultStreamsEvent => ({ type: 'default_streams', default_streams: streamIds }))

const Linkifier = Type.Object({ id: Type.Integer(), pattern: Type.String(), url_template: Type.String() }, { additionalProperties: false })
export const RealmLinkifiersEventSchema = eventObject({ type: Type.Literal('realm_linkifiers'), realm_linkifiers: Type.Array(Linkifier) })
export type RealmLinkifiersEvent = Static<typeof RealmLinkifiersEventSchema>
export const realmLinkifiersEvent = builder((linkifiers: RealmLinkifiersEvent['realm_linkifiers']): RealmLinkifiersEvent => ({ type: 'realm_linkifiers', realm_linkifiers: linkifiers }))

/** The legacy event upstream still sends beside realm_linkifiers, always empty since feature level 176. */
export const RealmFiltersEventSchema = eventObject({ type: Type.Literal('realm_filters'), realm_filters: Type.Array(Type.Never()) })
export type RealmFiltersEvent = Static<typeof RealmFiltersEventSchema>
export const realmFiltersEvent = builder((): RealmFiltersEvent => ({ type: 'realm_filters', realm_filters: [] }))
