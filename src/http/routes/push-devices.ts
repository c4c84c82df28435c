// Mobile push registration: POST/DELETE /users/me/apns_device_token (token,
// appid) and /users/me/android_gcm_reg_id (token); browsers' Web Push:
// POST/DELETE /users/me/webpush_subscription (endpoint, p256dh, auth; a Roost
// endpoint, upstream has none).
import { Type } from 'typebox'
import { route } from '../route.js'
import { addPushDevice, removePushDevice } from '../../actions/push-devices.js'
import { PUSH_KIND } from '../../domain/push-kind.js'
import { addWebPushSubscription, removeWebPushSubscription } from '../../actions/web-push-subscriptions.js'

export const routes = [
  route({
    method: 'POST',
    url: '/users/me/apns_device_token',
    params: { token: Type.String(), appid: Type.String() },
    handler: async (input, ctx) => {
      await addPushDevice(ctx, { kind: PUSH_KIND.APNS, token: input.token, appId: input.appid })
    },
  }),
  route({
    method: 'DELETE',
    url: '/users/me/apns_device_token',
    params: { token: Type.String() },
    handler: async (input, ctx) => {
      await removePushDevice(ctx, { kind: PUSH_KIND.APNS, token: input.token })
    },
  }),
  route({
    method: 'POST',
    url: '/users/me/android_gcm_reg_id',
    params: { token: Type.String() },
    handler: async (input, ctx) => {
      await addPushDevice(ctx, { kind: PUSH_KIND.FCM, token: input.token })
    },
  }),
  route({
    method: 'DELETE',
    url: '/users/me/android_gcm_reg_id',
    params: { token: Type.String() },
    handler: async (input, ctx) => {
      await removePushDevice(ctx, { kind: PUSH_KIND.FCM, token: input.token })
    },
  }),
  route({
    method: 'POST',
    url: '/users/me/webpush_subscription',
    params: { endpoint: Type.String(), p256dh: Type.String(), auth: Type.String() },
    handler: async (input, ctx) => {
      await addWebPushSubscription(ctx, input)
    },
  }),
  route({
    method: 'DELETE',
    url: '/users/me/webpush_subscription',
    params: { endpoint: Type.String() },
    handler: async (input, ctx) => {
      await removeWebPushSubscription(ctx, input)
    },
  }),
]
