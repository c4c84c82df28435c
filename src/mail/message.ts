// An outgoing mail and its RFC 5322 form (plain text, UTF-8).
import { randomUUID } from 'node:crypto'

export interface OutgoingMail {
  from: string
  to: string
  subject: string
  text: string
}

/** RFC 2047 encoding for a header value that is not plain ASCII. */
function headerValue(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`
}

export function formatMail(mail: OutgoingMail, date: Date): string {
  const domain = mail.from.split('@')[1] ?? 'localhost'
  const headers = [
    `From: ${mail.from}`,
    `To: ${mail.to}`,
    `Subject: ${headerValue(mail.subject)}`,
    `Date: ${date.toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: <${randomUUID()}@${domain}>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
  ]
  return `${headers.join('\r\n')}\r\n\r\n${mail.text.replace(/\r?\n/g, '\r\n')}\r\n`
}
