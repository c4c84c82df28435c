// Outgoing mail, all of it (invitations, email confirmation, missed-message
// notifications), goes through nodemailer: to SMTP_URL when it is set
// (smtp:// with STARTTLS when offered, smtps:// for implicit TLS, credentials
// in the URL), else as .eml files to DATA_DIR/outbox (the development outbox;
// tests read it). mailerFor() is the one place that chooses.
import { randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import nodemailer from 'nodemailer'
import type { Config } from '../config.js'
import type { OutgoingMail } from './message.js'

export type { OutgoingMail } from './message.js'

export interface Mailer {
  send(mail: OutgoingMail, now: Date): Promise<void>
}

export const outboxDir = (dataDir: string): string => join(dataDir, 'outbox')

const toNodemailer = (mail: OutgoingMail, now: Date) => ({
  from: mail.from,
  to: mail.to,
  subject: mail.subject,
  text: mail.text,
  ...(mail.html !== undefined ? { html: mail.html } : {}),
  ...(mail.replyTo !== undefined ? { replyTo: mail.replyTo } : {}),
  headers: mail.headers ?? {},
  date: now,
})

export class FileOutbox implements Mailer {
  private readonly composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' })

  constructor(private readonly dir: string) {}

  async send(mail: OutgoingMail, now: Date): Promise<void> {
    const info = await this.composer.sendMail(toNodemailer(mail, now))
    await mkdir(this.dir, { recursive: true })
    const name = `${now.getTime()}-${randomBytes(4).toString('hex')}.eml`
    await writeFile(join(this.dir, name), info.message as Buffer)
  }
}

/** How long (ms) an SMTP exchange may stall before it fails (a notification is then retried later). */
const SMTP_TIMEOUT_MS = 30_000

export class SmtpMailer implements Mailer {
  private readonly transport: ReturnType<typeof nodemailer.createTransport>

  constructor(url: string) {
    // One connection per mail (no pool): a node sends little, and a broken pooled connection would fail the next mail.
    this.transport = nodemailer.createTransport({ url, connectionTimeout: SMTP_TIMEOUT_MS, greetingTimeout: SMTP_TIMEOUT_MS, socketTimeout: SMTP_TIMEOUT_MS })
  }

  async send(mail: OutgoingMail, now: Date): Promise<void> {
    await this.transport.sendMail(toNodemailer(mail, now))
  }
}

export function mailerFor(config: Pick<Config, 'smtpUrl' | 'dataDir'>): Mailer {
  return config.smtpUrl ? new SmtpMailer(config.smtpUrl) : new FileOutbox(outboxDir(config.dataDir))
}

/** The sender address of the server's mails: noreply@ the host of EXTERNAL_URL. */
export function noreplyAddress(externalUrl: string): string {
  return `noreply@${new URL(externalUrl).hostname}`
}

/** Undoes quoted-printable encoding (soft line breaks, =XX bytes) so the outbox reads as written. */
function decodeQuotedPrintable(raw: Buffer): string {
  const text = raw.toString('latin1').replace(/=\r?\n/g, '')
  const bytes = Buffer.from(text.replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1')
  return bytes.toString('utf8')
}

/** Mails in a development outbox, oldest first, quoted-printable parts decoded (for tests and the docs). */
export async function readOutbox(dataDir: string): Promise<string[]> {
  const dir = outboxDir(dataDir)
  const names = await readdir(dir).catch(() => [] as string[])
  const raws = await Promise.all(names.filter((n) => n.endsWith('.eml')).sort().map((n) => readFile(join(dir, n))))
  return raws.map((raw) => (raw.includes('quoted-printable') ? decodeQuotedPrintable(raw) : raw.toString('utf8')))
}
