import { messagingRoutes } from './messaging-routes.js'
import type { RestRoute } from './route.js'

export const restRoutes: RestRoute[] = [...messagingRoutes]
