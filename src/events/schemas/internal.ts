// Fields publishers set on a bus item's event for events/queues/filter.ts,
// which removes them: never delivered to a client (see the conventions at
// the top of filter.ts).

/** subscription add: the recipient's global notification defaults. */
export const NOTIFICATION_DEFAULTS_FIELD = '__notification_defaults'
/** user_settings: the user's channels inheriting the changed global default. */
export const INHERITING_STREAMS_FIELD = '__inheriting_stream_ids'
/** realm_user add: the "Unknown user" placeholder of a user the recipient cannot access. */
export const INACCESSIBLE_USER_FIELD = '__inaccessible_user'
/** user_group update of a deactivated group's name: not for queues without include_deactivated_groups. */
export const DEACTIVATED_GROUP_FIELD = '__group_deactivated'
/** stream delete of a channel being archived: not for queues with archived_channels (they get stream update is_archived). */
export const FOR_ARCHIVING_FIELD = '__for_archiving'
