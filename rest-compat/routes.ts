import { messagingRoutes } from './messaging-routes.js'
import { smsRoutes } from './sms-routes.js'
import { channelRoutes } from './channel-routes.js'
import type { RestRoute } from './route.js'

export const restRoutes: RestRoute[] = [...messagingRoutes, ...smsRoutes, ...channelRoutes]
