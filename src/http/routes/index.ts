// The route table: every route module listed once.
import type { Route } from '../route.js'
import { routes as serverSettings } from './server-settings.js'

export const allRoutes: Route[] = [...serverSettings]
