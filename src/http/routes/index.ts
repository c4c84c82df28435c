// The route table: every route module listed once.
import type { Route } from '../route.js'
import { routes as serverSettings } from './server-settings.js'
import { routes as auth } from './auth.js'
import { routes as users } from './users.js'
import { routes as drafts } from './drafts.js'
import { routes as userGroups } from './user-groups.js'
import { routes as uploads } from './uploads.js'
import { routes as events } from './events.js'
import { routes as messages } from './messages.js'
import { routes as subscriptions } from './subscriptions.js'
import { routes as streams } from './streams.js'
import { routes as settings } from './settings.js'
import { routes as userStatus } from './user-status.js'
import { routes as alertWords } from './alert-words.js'
import { routes as customProfileFields } from './custom-profile-fields.js'
import { routes as presence } from './presence.js'

export const allRoutes: Route[] = [...serverSettings, ...auth, ...users, ...drafts, ...userGroups, ...uploads, ...events, ...messages, ...subscriptions, ...streams, ...settings, ...userStatus, ...alertWords, ...customProfileFields, ...presence]
