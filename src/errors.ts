// One error class for every failure a client can see, and named constructors
// for the conditions of the spec's error table. No Fastify imports here.

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'AUTHENTICATION_FAILED'
  | 'USER_DEACTIVATED'
  | 'REALM_DEACTIVATED'
  | 'PASSWORD_AUTH_DISABLED'
  | 'NONEXISTENT_SUBDOMAIN'
  | 'RATE_LIMIT_HIT'
  | 'STREAM_DOES_NOT_EXIST'
  | 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED'
  | 'STREAM_WILDCARD_MENTION_NOT_ALLOWED'
  | 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED'
  | 'INVITATION_FAILED'
  | 'BAD_EVENT_QUEUE_ID'
  | 'UNAUTHORIZED_PRINCIPAL'
  | 'REQUEST_VARIABLE_MISSING'
  | 'REQUEST_VARIABLE_INVALID'
  | 'INVALID_JSON'
  | 'BAD_NARROW'
  | 'REACTION_ALREADY_EXISTS'
  | 'REACTION_DOES_NOT_EXIST'
  | 'REQUEST_CONFUSING_VAR'
  | 'CANNOT_DEACTIVATE_LAST_USER'
  | 'CANNOT_DEACTIVATE_GROUP_IN_USE'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'INTERNAL_SERVER_ERROR'
  | 'SERVER_NOT_READY'
  | 'CSRF_FAILED'
  | 'EXPECTATION_MISMATCH'
  | 'SYSTEM_GROUP_REQUIRED'

export class ApiError extends Error {
  constructor(
    readonly msg: string,
    readonly code: ErrorCode = 'BAD_REQUEST',
    readonly status = 400,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(msg)
  }
}

const BASIC_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="roost"' }

export const badRequest = (msg: string, extra: Record<string, unknown> = {}) => new ApiError(msg, 'BAD_REQUEST', 400, extra)

// Authentication (HTTP Basic on /api/v1)
export const unauthorized = (msg: string) => new ApiError(msg, 'UNAUTHORIZED', 401, {}, BASIC_CHALLENGE)
export const notLoggedIn = () => unauthorized('Not logged in: API authentication or user session required')
export const missingAuthHeader = () => unauthorized('Missing authorization header for basic auth')
export const invalidAuthHeader = () => unauthorized('Invalid authorization header for basic auth')
export const basicAuthRequired = () => new ApiError('This endpoint requires HTTP basic authentication.', 'BAD_REQUEST', 400)
export const invalidApiKey = () => unauthorized('Invalid API key')
export const malformedApiKey = () => unauthorized('Malformed API key')
// Upstream's UserDeactivatedError and RealmDeactivatedError (zerver/decorator.py validate_account_and_subdomain).
export const accountDeactivatedAuth = () => new ApiError('Account is deactivated', 'USER_DEACTIVATED', 401, {}, BASIC_CHALLENGE)
export const realmDeactivatedAuth = () => new ApiError('This organization has been deactivated', 'REALM_DEACTIVATED', 401, {}, BASIC_CHALLENGE)
export const wrongSubdomain = () => unauthorized('Account is not associated with this subdomain')

// Browser sessions under /json (docs/web-sessions.md): upstream's answers for a missing session and a failed CSRF check.
export const sessionRequired = () =>
  new ApiError('Not logged in: API authentication or user session required', 'UNAUTHORIZED', 401, {}, { 'WWW-Authenticate': 'Session realm="roost"' }) // SESSION_CHALLENGE (http/error-handler.ts)
export const csrfFailed = (reason: string) => new ApiError(`CSRF error: ${reason}`, 'CSRF_FAILED', 403, { reason })

// POST /fetch_api_key
export const authenticationFailed = () =>
  new ApiError('Your username or password is incorrect', 'AUTHENTICATION_FAILED', 401)
export const userDeactivated = () => new ApiError('Account is deactivated', 'USER_DEACTIVATED', 401)
export const realmDeactivated = () => new ApiError('This organization has been deactivated', 'REALM_DEACTIVATED', 401)
export const passwordAuthDisabled = () =>
  new ApiError('Password authentication is disabled in this organization', 'PASSWORD_AUTH_DISABLED', 401)
export const invalidSubdomain = () => new ApiError('Invalid subdomain', 'NONEXISTENT_SUBDOMAIN', 404)
export const rateLimited = (retryAfterSeconds: number) =>
  new ApiError('API usage exceeded rate limit', 'RATE_LIMIT_HIT', 429, { 'retry-after': retryAfterSeconds }, {
    'Retry-After': String(retryAfterSeconds),
  })

// Parameters
export const missingArgument = (name: string) =>
  new ApiError(`Missing '${name}' argument`, 'REQUEST_VARIABLE_MISSING', 400, { var_name: name })
export const invalidJson = (name: string) => badRequest(`${name} is not valid JSON`)
export const confusingParameters = (name: string, alias: string) =>
  new ApiError(`Can't decide between '${name}' and '${alias}' arguments`, 'REQUEST_CONFUSING_VAR', 400)

// Routing
export const notFound = () => new ApiError('Endpoint not found', 'NOT_FOUND', 404)
export const methodNotAllowed = (allowed: string[]) =>
  new ApiError('Method Not Allowed', 'METHOD_NOT_ALLOWED', 405, { allowed_methods: allowed }, { Allow: allowed.join(', ') })
export const accessDenied = () => new ApiError('Access denied', 'BAD_REQUEST', 403)
export const insufficientPermission = () => badRequest('Insufficient permission')
export const userNotAuthorizedToChangeEmails = () => badRequest('User not authorized to change user emails')
// Upstream's OrganizationAdministratorRequiredError / OrganizationOwnerRequiredError: code UNAUTHORIZED_PRINCIPAL, HTTP 400.
export const mustBeAdmin = () => new ApiError('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL', 400)

// Channels
export const streamIdNotFound = (streamId: number) =>
  new ApiError(`Channel with ID '${streamId}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, { stream_id: streamId })
export const streamNameNotFound = (name: string) =>
  new ApiError(`Channel '${name}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, { stream: name })
export const invalidStreamId = () => badRequest('Invalid channel ID')
export const invalidStreamName = (name: string) => badRequest(`Invalid channel name '${name}'`)
export const emptyStreamName = () => badRequest("Channel name can't be empty.")
export const streamNameTooLong = (limit: number) => badRequest(`Channel name too long (limit: ${limit} characters).`)
export const invalidStreamNameCharacter = (position: number) => badRequest(`Invalid character in channel name, at position ${position}.`)
export const unableToAccessStream = (name: string) => badRequest(`Unable to access channel (${name}).`)
export const webPublicStreamsDisabled = () => badRequest('Web-public channels are not enabled.')
export const defaultStreamCannotBePrivate = () => badRequest('A default channel cannot be private.')
export const moderationChannelMustBePrivate = () => badRequest('Moderation request channel must be private.')
export const invalidParameters = () => badRequest('Invalid parameters')
export const notSubscribedToStreamId = (streamId: number) => badRequest(`Not subscribed to channel ID ${streamId}`)
export const unknownSubscriptionProperty = (property: string) => badRequest(`Unknown subscription property: ${property}`)
export const userNotAuthorizedForQuery = () => badRequest('User not authorized for this query')
export const notAllowedForGuests = () => badRequest('Not allowed for guest users')
export const realmAlreadyDeactivated = () => badRequest('The organization is already deactivated')
export const realmAlreadyActive = () => badRequest('The organization is already active')
export const mustBeOwner = () => new ApiError('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL', 400)
export const principalDeactivated = () => badRequest('User is deactivated')
export const invalidUserGroup = () => badRequest('Invalid user group')
export const groupSettingNotAllowed = (setting: string, groupName: string) =>
  badRequest(`'${setting}' setting cannot be set to '${groupName}' group.`)
/** Sending (or scheduling) to the empty topic where the organization requires topics (upstream check_message). */
export const topicsRequired = () => badRequest('Topics are required in this organization')
/** `roost channel add-members` refuses an archived channel. */
export const streamArchived = (name: string) => badRequest(`Channel '${name}' is archived.`)
/** DELETE /streams/{id} of an archived channel (upstream do_deactivate_stream). */
export const streamAlreadyDeactivated = () => badRequest('Channel is already deactivated')
export const invalidHexColor = (name: string) => badRequest(`${name} is not a valid hex color code`)
export const notABoolean = (name: string) => badRequest(`${name} is not a boolean`)
export const badValueFor = (name: string, value: unknown) =>
  new ApiError(`Bad value for '${name}': ${String(value)}`, 'REQUEST_VARIABLE_INVALID', 400, { var_name: name, bad_value: value })

// Users and messages
export const noSuchUser = () => badRequest('No such user')
export const emailInUse = (email: string) => badRequest(`Email '${email}' already in use`)
export const directMessagesDisabled = () => badRequest('Direct messages are disabled in this organization.')
export const noAuthorizingUser = () => badRequest('This conversation does not include any users who can authorize it.')
export const mayNotInitiateDirectMessages = () => badRequest('You do not have permission to initiate direct message conversations.')
export const emailNotAllowed = (email: string) => badRequest(`Email '${email}' not allowed in this organization`)
export const badNameOrUsername = () => badRequest('Bad name or username')
export const nameTooLong = () => badRequest('Name too long!')
export const nameTooShort = () => badRequest('Name too short!')
export const invalidNameCharacters = () => badRequest('Invalid characters in name!')
export const passwordTooWeak = () => badRequest('The password is too weak.')
export const invalidEmailAddress = () => badRequest('Enter a valid email address.')
export const invalidUserId = (id: number | string) => badRequest(`Invalid user ID ${id}`)
export const invalidMessage = () => badRequest('Invalid message(s)')
/** Upstream's check_user_group_mention_allowed. */
export const groupMentionNotAllowed = (groupName: string) => badRequest(`You are not allowed to mention user group '${groupName}'.`)
export const streamWildcardMentionNotAllowed = () =>
  new ApiError('You do not have permission to use channel wildcard mentions in this channel.', 'STREAM_WILDCARD_MENTION_NOT_ALLOWED')
export const topicWildcardMentionNotAllowed = () =>
  new ApiError('You do not have permission to use topic wildcard mentions in this topic.', 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED')

// Sending and fetching messages
export const missingTopic = () => badRequest('Missing topic')
export const missingChannel = () => badRequest('Missing channel')
export const cannotSendToMultipleChannels = () => badRequest('Cannot send to multiple channels')
export const invalidEmailRecipient = (email: string) => badRequest(`Invalid email '${email}'`)
export const recipientDeactivated = (email: string) => badRequest(`'${email}' is no longer using Roost.`)
export const notAuthorizedToSendToChannel = (name: string) => badRequest(`Not authorized to send to channel '${name}'`)
export const renderedContentTooLarge = (maxBytes: number) =>
  badRequest(`Unable to render message: its rendered content would exceed ${maxBytes} bytes`)
export const matchesTooLarge = (maxBytes: number) =>
  badRequest(`The matching messages exceed ${maxBytes} bytes; ask about fewer messages in msg_ids`)
export const tooManyMessagesRequested = (max: number) => badRequest(`Too many messages requested (maximum ${max}).`)
export const invalidAnchor = () => badRequest('Invalid anchor')

// Events
export const badEventQueueId = (queueId: string) =>
  new ApiError(`Bad event queue ID: ${queueId}`, 'BAD_EVENT_QUEUE_ID', 400, { queue_id: queueId })
// Drafts
export const draftsSyncDisabled = () => badRequest('User has disabled synchronizing drafts.')
export const draftNotFound = () => new ApiError('Draft does not exist', 'BAD_REQUEST', 404)
export const draftNeedsOneChannel = () => badRequest('Must specify exactly 1 channel ID for channel messages')
export const tooManyDrafts = (limit: number) => badRequest(`You can have at most ${limit} drafts.`)
export const topicHasNullBytes = () => badRequest('Topic must not contain null bytes')
export const negativeTimestamp = () => badRequest('Timestamp must not be negative.')
// Saved snippets
export const savedSnippetNotFound = () => new ApiError('Saved snippet does not exist.', 'BAD_REQUEST', 404)
export const textTooShort = (name: string) => badRequest(`${name} is too short.`)
export const tooManySavedSnippets = (limit: number) => badRequest(`You can have at most ${limit} saved snippets.`)
// User groups
export const invalidUserIdInList = (id: number) => badRequest(`Invalid user ID: ${id}`)
export const invalidUserGroupId = (id: number) => badRequest(`Invalid user group ID: ${id}`)
export const userGroupNameEmpty = () => badRequest("User group name can't be empty!")
export const userGroupNameTooLong = (limit: number) => badRequest(`User group name cannot exceed ${limit} characters.`)
export const userGroupNameBadPrefix = (prefix: string) => badRequest(`User group name cannot start with '${prefix}'.`)
export const userGroupExists = (name: string) => badRequest(`User group '${name}' already exists.`)
export const noNewDataSupplied = () => badRequest('No new data supplied')
export const nothingToAddOrDelete = () => badRequest('Nothing to do. Specify at least one of "add" or "delete".')
export const nothingToDoForGroupMembers = () =>
  badRequest('Nothing to do. Specify at least one of "add", "delete", "add_subgroups" or "delete_subgroups".')
export const alreadyGroupMember = (userId: number) => badRequest(`User ${userId} is already a member of this group`)
export const notGroupMember = (userId: number) => badRequest(`There is no member '${userId}' in this user group`)
export const alreadySubgroup = (groupId: number) => badRequest(`User group ${groupId} is already a subgroup of this group.`)
export const notSubgroup = (groupId: number) => badRequest(`User group ${groupId} is not a subgroup of this group.`)
export const subgroupCycle = (groupId: number) =>
  badRequest(`User group ${groupId} is already a subgroup of one of the passed subgroups.`)
/** Level 298: where the group is used, upstream's objection objects. */
export const cannotDeactivateGroupInUse = (objections: Record<string, unknown>[]) =>
  new ApiError('Cannot deactivate user group in use.', 'CANNOT_DEACTIVATE_GROUP_IN_USE', 400, { objections })
// Uploads
export const noFileUploaded = () => badRequest('You must specify a file to upload')
export const tooManyFilesUploaded = () => badRequest('You may only upload one file at a time')
export const uploadTooLarge = (limitMib: number) => badRequest(`Uploaded file is larger than the allowed limit of ${limitMib} MiB`)
export const fileNotFound = () => new ApiError('File not found', 'NOT_FOUND', 404)
export const fileAccessDenied = () => new ApiError('You are not authorized to view this file.', 'BAD_REQUEST', 403)

// Settings, status, presence, alert words, custom profile fields
export const botRequestsNotAccepted = () => badRequest('This endpoint does not accept bot requests.')
export const wrongPassword = () => badRequest('Wrong password!')
export const newPasswordTooWeak = () => badRequest('New password is too weak!')
export const profileFieldNotEditable = () => badRequest('You are not allowed to change this field. Contact an administrator to update it.')
export const newPasswordTooLong = () => badRequest('New password is too long!')
export const incompatibleDenseMode = () => badRequest("Incompatible values for 'dense_mode' and 'web_font_size_px'.")
export const emailChangesDisabled = () => badRequest('Email address changes are disabled in this organization.')
export const invalidSettingValue = (name: string) => badRequest(`Invalid ${name}`)
export const invalidNotificationSound = (sound: string) => badRequest(`Invalid notification sound '${sound}'`)
export const invalidEmailBatchingPeriod = (seconds: number) => badRequest(`Invalid email batching period: ${seconds} seconds`)
export const invalidConfirmationKey = () => new ApiError('Invalid or expired confirmation link', 'BAD_REQUEST', 404)
export const noNewStatusValues = () => badRequest('Client did not pass any new values.')
export const textTooLong = (name: string, limit: number) => badRequest(`${name} is too long (limit: ${limit} characters)`)
export const emojiNameRequired = () => badRequest('Client must pass emoji_name if they pass either emoji_code or reaction_type.')
export const emojiDoesNotExist = (name: string) => badRequest(`Emoji '${name}' does not exist`)
export const invalidCustomEmoji = () => badRequest('Invalid custom emoji.')
export const invalidCustomEmojiName = () => badRequest('Invalid custom emoji name.')
export const customEmojiDeactivated = () => badRequest('This custom emoji has been deactivated.')
export const invalidEmojiCode = () => badRequest('Invalid emoji code.')
export const invalidEmojiName = () => badRequest('Invalid emoji name.')
export const invalidEmojiType = () => badRequest('Invalid emoji type.')
export const invalidPresenceStatus = (status: string) => badRequest(`Invalid status: ${status}`)
export const presenceNotForBots = () => badRequest('Presence is not supported for bot users.')
export const noPresenceData = (who: string) => badRequest(`No presence data for ${who}`)
export const profileFieldNotFound = (id: number) => badRequest(`Field id ${id} not found.`)
export const profileFieldNameInUse = () => badRequest('A field with that label already exists.')
export const profileFieldLabelBlank = () => badRequest('Label cannot be blank.')
export const invalidProfileFieldType = () => badRequest('Invalid field type.')
export const invalidProfileFieldData = (msg: string) => badRequest(msg)
export const invalidProfileFieldValue = (msg: string) => badRequest(msg)
export const invalidProfileFieldOrder = () => badRequest('Invalid order mapping.')
export const profileFieldRequired = (name: string) => badRequest(`Field '${name}' is required.`)

// Scheduled messages
export const scheduledTimeNotInFuture = () => badRequest('Scheduled delivery time must be in the future.')
export const scheduledMessageNotFound = () => new ApiError('Scheduled message does not exist', 'BAD_REQUEST', 404)
export const scheduledMessageAlreadySent = () => badRequest('Scheduled message was already sent')
export const tooManyScheduledMessages = (limit: number) => badRequest(`You can have at most ${limit} scheduled messages.`)
export const nothingToChange = () => badRequest('Nothing to change')
export const scheduledRecipientRequired = () => badRequest('Recipient required when updating type of scheduled message.')
export const scheduledTopicRequired = () => badRequest('Topic required when updating scheduled message type to channel.')

// Invitations
export interface InvitationFailure {
  errors: [string, string, boolean][]
  sent_invitations: boolean
  license_limit_reached: boolean
  daily_limit_reached: boolean
}
export const invitationFailed = (msg: string, failure: InvitationFailure) =>
  new ApiError(msg, 'INVITATION_FAILED', 400, { ...failure })
export const noInviteeEmails = () => badRequest('You must specify at least one email address.')
export const noSuchInvitation = () => badRequest('No such invitation')
export const invitationAlreadyRevoked = () => badRequest('Invitation has already been revoked')
export const accountTooNewToInvite = () =>
  badRequest('Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.')
export const invalidInviteAs = () => badRequest('Invalid invite_as')

// Editing, moving and deleting messages; reactions (PATCH/DELETE /messages/{id}, /messages/{id}/reactions)
export const moveTimeLimitExceeded = (o: { firstMessageIdAllowedToMove: number | null; totalMessagesInTopic: number; totalMessagesAllowedToMove: number }) =>
  new ApiError(
    `You only have permission to move the ${o.totalMessagesAllowedToMove}/${o.totalMessagesInTopic} most recent messages in this topic.`,
    'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
    400,
    {
      first_message_id_allowed_to_move: o.firstMessageIdAllowedToMove,
      total_messages_in_topic: o.totalMessagesInTopic,
      total_messages_allowed_to_move: o.totalMessagesAllowedToMove,
    },
  )
export const messageAlreadyDeleted = () => badRequest('Message already deleted')
export const reactionAlreadyExists = () => new ApiError('Reaction already exists.', 'REACTION_ALREADY_EXISTS')
export const reactionDoesNotExist = () => new ApiError("Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST')
export const reactionNeedsEmoji = () => badRequest('At least one of the following arguments must be present: emoji_name, emoji_code')

// User administration (PATCH/DELETE /users/{id}, reactivate, avatars, PATCH /bots/{id})
export const invalidRole = () => badRequest('Invalid role')
export const lastOwnerDemotion = () => badRequest('The owner permission cannot be removed from the only organization owner.')
export const cannotDeactivateLastOwner = () => badRequest('Cannot deactivate the only organization owner')
export const cannotDeactivateLastUser = (isLastOwner: boolean) => {
  const entity = isLastOwner ? 'organization owner' : 'user'
  return new ApiError(`Cannot deactivate the only ${entity}`, 'CANNOT_DEACTIVATE_LAST_USER', 400, { entity, is_last_owner: isLastOwner })
}
export const userAlreadyActive = () => badRequest('User is already active')
export const noSuchBot = () => badRequest('No such bot')
export const botOwnerNotFound = () => badRequest('Failed to change owner, no such user')
export const botOwnerDeactivated = () => badRequest('Failed to change owner, user is deactivated')
export const botOwnerIsBot = () => badRequest("Failed to change owner, bots can't own other bots")
export const avatarChangesDisabled = () => badRequest('Avatar changes are disabled in this organization.')
export const exactlyOneAvatar = () => badRequest('You must upload exactly one avatar.')
export const notAnImage = () => badRequest('Could not decode image; did you upload an image file?')

// Channel administration, default channels, linkifiers, organization settings
// (upstream's OrganizationAdministratorRequiredError / OrganizationOwnerRequiredError)
export const streamNameInUse = () => badRequest('Channel name already in use.')
export const streamAlreadyHasName = () => badRequest('Channel already has that name.')
export const privateStreamCannotBeDefault = () => badRequest('Private channels cannot be made default.')
export const subscribersOfPrivateStreamUnavailable = () => badRequest('Unable to retrieve subscribers for private channel')
export const invalidPolicyValue = (name: string) => badRequest(`Invalid ${name}`)
export const linkifierNotFound = () => badRequest('Linkifier not found.')
export const linkifierInvalid = (field: string, msg: string) => new ApiError(msg, 'BAD_REQUEST', 400, { errors: { [field]: [msg] } })
export const tooManyLinkifiers = (limit: number) => badRequest(`An organization may have at most ${limit} linkifiers.`)
export const linkifierOrderDuplicates = () => badRequest('The ordered list must not contain duplicated linkifiers')
export const linkifierOrderIncomplete = () => badRequest('The ordered list must enumerate all existing linkifiers exactly once')
export const invalidLanguage = (code: string) => badRequest(`Invalid language '${code}'`)
export const invalidVideoChatProvider = (value: number) => badRequest(`Invalid video_chat_provider ${value}`)
export const invalidGiphyRating = (value: number) => badRequest(`Invalid giphy_rating ${value}`)
export const groupSettingMustBeSystemGroup = (setting: string) =>
  new ApiError(`'${setting}' must be a system user group.`, 'SYSTEM_GROUP_REQUIRED', 400, { setting_name: setting })
// Group-setting values (domain/group-setting-value.ts)
export const groupSettingOldMismatch = () => new ApiError("'old' value does not match the expected value.", 'EXPECTATION_MISMATCH', 400)
export const userGroupDeactivated = () => badRequest('User group is deactivated.')
export const groupSettingValueInvalid = (name: string, why: string) => badRequest(`Invalid ${name}: ${why}`)
// Custom emoji, attachments, avatars by user, push devices (cl-emoji)
export const emojiNameMissing = () => badRequest('Emoji name is missing')
export const emojiNameBadEnd = () => badRequest('Emoji names must end with either a letter or digit.')
export const emojiNameBadCharacters = () =>
  badRequest('Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.')
export const emojiNameTooLong = (limit: number) => badRequest(`emoji_name is too long (limit: ${limit} characters)`)
export const customEmojiExists = () => badRequest('A custom emoji with this name already exists.')
export const exactlyOneFile = () => badRequest('You must upload exactly one file.')
export const onlyAdminsOverrideBuiltInEmoji = () => badRequest('Only administrators can override built-in emoji.')
export const invalidImageFormat = () => badRequest('Invalid image format')
export const customEmojiNotFound = (name: string) => new ApiError(`Emoji '${name}' does not exist`, 'BAD_REQUEST', 404)
/** Level 333: the sender (and a bot's owner) is not in the channel's can_send_message_group. */
export const cannotPostInChannel = () => badRequest('You do not have permission to post in this channel.')
/** Upstream's CannotAdministerChannelError (level 325): the user may see the channel but is not one of its administrators. */
export const cannotAdministerChannel = () => badRequest('You do not have permission to administer this channel.')
export const mustBeAdminOrEmojiAuthor = () => badRequest('Must be an organization administrator or emoji author')
export const invalidAttachment = () => badRequest('Invalid attachment')
export const emptyOrInvalidLengthToken = () => badRequest('Empty or invalid length token')
export const invalidApnsToken = () => badRequest('Invalid APNS token')
export const invalidAppId = () => badRequest('Invalid app ID')
export const pushTokenDoesNotExist = () => badRequest('Token does not exist')
// Message extras: topics, mark-as-read, edit history, read receipts, muting (cl-messages)
export const incompatibleParameters = (names: string[]) =>
  badRequest(`Unsupported parameter combination: ${names.join(', ')}`, { parameters: names.join(', ') })
/** A missing choice between two parameters, worded as upstream's missing-argument error (plain BAD_REQUEST). */
export const missingOneOf = (name: string) => badRequest(`Missing '${name}' argument`)
export const noSuchTopic = (topic: string) => badRequest(`No such topic '${topic}'`)
export const topicNotMuted = () => badRequest('Topic is not muted')
export const editHistoryDisabled = () => badRequest('Message edit history is disabled in this organization')
export const readReceiptsDisabled = () => badRequest('Read receipts are disabled in this organization.')
export const cannotMuteSelf = () => badRequest('Cannot mute self')
export const userAlreadyMuted = () => badRequest('User already muted')
export const userNotMuted = () => badRequest('User is not muted')
// A backend (PostgreSQL or Redis) is unreachable: 503, which clients retry. Upstream's code for a server not ready to serve.
export const serverNotReady = () =>
  new ApiError('The server is temporarily unable to serve this request; try again shortly', 'SERVER_NOT_READY', 503, {}, { 'Retry-After': '1' })

// Past its admission limits (http/admission.ts) a node refuses new requests at once; clients retry after Retry-After.
export const serverOverloaded = (retryAfterSeconds: number) =>
  new ApiError('The server is overloaded; try again shortly', 'SERVER_NOT_READY', 503, {}, { 'Retry-After': String(retryAfterSeconds) })

// Organizations (the admin CLI)
export const subdomainUnavailable = () => badRequest('Subdomain already in use. Please choose a different one.')
export const realmNameInvalid = () => badRequest('The organization name must have 1 to 40 characters.')
export const tooManyAlertWords = (limit: number) => badRequest(`You can have at most ${limit} alert words`)
/** An array parameter longer than its documented maximum. */
export const tooManyItems = (name: string, limit: number) => badRequest(`${name} has too many items (limit: ${limit})`)
export const requestBodyTooLarge = () => new ApiError('Request body is too large', 'BAD_REQUEST', 413)
// Push notification bouncer (upstream's PushNotificationBouncerRetryLaterError is a 502)
export const pushBouncerUnavailable = (detail: string) => new ApiError(detail, 'BAD_REQUEST', 502)
