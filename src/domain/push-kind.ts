// The kinds of push-notification device tokens (the push_device.kind column).
export const PUSH_KIND = { APNS: 1, FCM: 2 } as const
export type PushKind = (typeof PUSH_KIND)[keyof typeof PUSH_KIND]
