// The content of one missed-message email (upstream
// zerver/lib/email_notifications.py): one conversation, its messages oldest
// first, each with its sender and a link back; HTML and plain text; the
// sender and organization in From, an unsubscribe link in the body and in
// List-Unsubscribe. No I/O.
import { escapeHtml } from '../domain/html-escape.js'
import { nearMessageUrl } from '../domain/message-edit.js'
import type { OutgoingMail } from '../mail/message.js'

export interface EmailMessage {
  id: number
  senderId: number
  senderName: string
  content: string
  renderedContent: string
}

export interface MissedMessageEmailInput {
  realmName: string
  realmUrl: string
  recipient: { id: number; fullName: string; email: string }
  /** null for direct messages. */
  stream: { id: number; name: string } | null
  topic: string
  /** Other participants of a direct-message conversation (names sorted as upstream shows them). */
  dmOthers: { id: number; fullName: string }[]
  messages: EmailMessage[]
  /** False when the user or the organization keeps message content out of emails. */
  includeContent: boolean
  /** Upstream's include_realm_name_in_missedmessage_emails_subject: the subject starts with `[organization name] `. */
  realmNameInSubject?: boolean
  /** The group through which the user was mentioned (upstream names it in the email), when not mentioned personally. */
  mentionedGroupName?: string | null
  unsubscribeUrl: string
  noreply: string
}

const quoteName = (name: string): string => `"${name.replace(/["\\]/g, '\\$&')}"`

export function conversationUrl(input: Pick<MissedMessageEmailInput, 'realmUrl' | 'stream' | 'topic' | 'dmOthers'>, messageId: number): string {
  if (input.stream) return nearMessageUrl(input.realmUrl, input.stream, input.topic, messageId)
  const ids = input.dmOthers.map((u) => u.id).sort((a, b) => a - b)
  return `${input.realmUrl}/#narrow/dm/${ids.join(',')}-${ids.length > 1 ? 'group' : 'dm'}/near/${messageId}`
}

export function missedMessageSubject(input: Pick<MissedMessageEmailInput, 'stream' | 'topic' | 'dmOthers'>): string {
  if (input.stream) return `#${input.stream.name} > ${input.topic}`
  if (input.dmOthers.length <= 1) return `DMs with ${input.dmOthers[0]?.fullName ?? 'yourself'}`
  return `Group DMs with ${input.dmOthers.map((u) => u.fullName).join(', ')}`
}

const NO_CONTENT = 'This email does not include message content because you have disabled message content in email notifications.'

export function renderMissedMessageEmail(input: MissedMessageEmailInput): OutgoingMail {
  const senders = [...new Set(input.messages.map((m) => m.senderName))]
  const fromName = senders.length === 1 ? `${senders[0]} (${input.realmName})` : `${input.realmName} notifications`
  const conversation = missedMessageSubject(input)
  const subject = input.realmNameInSubject ? `[${input.realmName}] ${conversation}` : conversation
  const last = input.messages[input.messages.length - 1]
  const replyUrl = last ? conversationUrl(input, last.id) : input.realmUrl

  const groupLine = input.mentionedGroupName ? `You are receiving this because @${input.mentionedGroupName} was mentioned.` : null
  const text: string[] = [`Hi ${input.recipient.fullName},`, '', `You have new messages in ${input.realmName} (${input.realmUrl}):`, '', conversation, '']
  if (groupLine) text.push(groupLine, '')
  const html: string[] = [
    `<p>Hi ${escapeHtml(input.recipient.fullName)},</p>`,
    `<p>You have new messages in <a href="${escapeHtml(input.realmUrl)}">${escapeHtml(input.realmName)}</a>:</p>`,
    `<h3>${escapeHtml(conversation)}</h3>`,
    ...(groupLine ? [`<p class="mentioned-group">${escapeHtml(groupLine)}</p>`] : []),
  ]
  for (const m of input.messages) {
    const url = conversationUrl(input, m.id)
    text.push(`${m.senderName}:`, input.includeContent ? m.content : NO_CONTENT, `(${url})`, '')
    html.push(
      `<div class="message"><p><b>${escapeHtml(m.senderName)}</b> <a href="${escapeHtml(url)}">View message</a></p>`,
      input.includeContent ? `<div class="content">${m.renderedContent}</div>` : `<p>${escapeHtml(NO_CONTENT)}</p>`,
      '</div>',
    )
  }
  text.push(`Reply in ${input.realmName}: ${replyUrl}`, '', `To stop these emails, unsubscribe: ${input.unsubscribeUrl}`)
  html.push(
    `<p><a href="${escapeHtml(replyUrl)}">Reply in ${escapeHtml(input.realmName)}</a></p>`,
    `<p style="font-size:small">You are receiving this because you were away when these messages arrived. <a href="${escapeHtml(input.unsubscribeUrl)}">Unsubscribe</a> from missed-message emails.</p>`,
  )
  return {
    from: `${quoteName(fromName)} <${input.noreply}>`,
    to: input.recipient.email,
    replyTo: input.noreply,
    subject,
    text: text.join('\n'),
    html: `<!DOCTYPE html>\n<html><body>\n${html.join('\n')}\n</body></html>\n`,
    headers: {
      'List-Unsubscribe': `<${input.unsubscribeUrl}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'X-Roost-Organization': input.realmUrl,
    },
  }
}
