// The database layer's public surface. Raw driver access (withRawSession)
// is deliberately not exported: everything else goes through Prisma.
import type { Prisma } from './generated/client.js'

export { openDatabase, DatabaseConfigError, type Database, type OpenDatabaseOptions } from './client.js'
export { applyMigrations, defaultMigrationsDir, type ApplyMigrationsOptions } from './migrate.js'
export { Prisma } from './generated/client.js'
export type {
  PrismaClient,
  Realm,
  RealmDomain,
  User,
  UserSettings,
  CustomProfileField,
  CustomProfileFieldValue,
  Stream,
  DefaultStream,
  Subscription,
  Message,
  UserMessage,
  Reaction,
  RealmEmoji,
  UserGroup,
  UserGroupMember,
  UserGroupSubgroup,
  UserTopic,
  UserStatus,
  AlertWord,
  Draft,
  SavedSnippet,
  ScheduledMessage,
  Invitation,
  MultiuseInvite,
  EmailChangeRequest,
  Attachment,
  AttachmentMessage,
  AttachmentScheduledMessage,
  RealmLinkifier,
} from './generated/client.js'

/** The client handed to `prisma.$transaction(async (tx) => …)` callbacks. */
export type Tx = Prisma.TransactionClient
