// The confirmation mail of an email change (PATCH /settings `email`): sent to
// the new address with the link that completes the change.
import type { EmailChangeRequest, Realm } from '../db/index.js'
import type { Config } from '../config.js'
import { realmUrl } from '../present/realm.js'
import { mailerFor, noreplyAddress } from './outbox.js'

export const confirmEmailPath = (key: string): string => `/accounts/confirm_new_email/${key}`

export async function sendEmailChangeConfirmation(
  ctx: { config: Config; now: () => Date },
  change: { request: EmailChangeRequest; realm: Realm; fullName: string },
): Promise<void> {
  const base = realmUrl(change.realm, ctx.config.externalUrl)
  const link = `${base}${confirmEmailPath(change.request.key)}`
  const text = [
    `Hi ${change.fullName},`,
    '',
    `We received a request to change the email address for your account in ${change.realm.name} (${base})`,
    `from ${change.request.oldEmail} to ${change.request.newEmail}.`,
    '',
    'To confirm this change, open this link within 24 hours:',
    link,
    '',
    'If you did not request this change, you can ignore this message; your address stays the same.',
  ].join('\n')
  await mailerFor(ctx.config).send(
    { from: noreplyAddress(ctx.config.externalUrl), to: change.request.newEmail, subject: `Verify your new email address for ${change.realm.name}`, text },
    ctx.now(),
  )
}
