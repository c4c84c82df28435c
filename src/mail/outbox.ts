// Outgoing mail: through SMTP when SMTP_URL is set, else written as .eml
// files to DATA_DIR/outbox (the development outbox; tests read it).
import { randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Config } from '../config.js'
import { formatMail, type OutgoingMail } from './message.js'
import { sendSmtp } from './smtp.js'

export type { OutgoingMail } from './message.js'

export interface Mailer {
  send(mail: OutgoingMail, now: Date): Promise<void>
}

export const outboxDir = (dataDir: string): string => join(dataDir, 'outbox')

export class FileOutbox implements Mailer {
  constructor(private readonly dir: string) {}

  async send(mail: OutgoingMail, now: Date): Promise<void> {
    await mkdir(this.dir, { recursive: true })
    const name = `${now.getTime()}-${randomBytes(4).toString('hex')}.eml`
    await writeFile(join(this.dir, name), formatMail(mail, now))
  }
}

export class SmtpMailer implements Mailer {
  constructor(private readonly url: string) {}

  async send(mail: OutgoingMail, now: Date): Promise<void> {
    await sendSmtp(this.url, { from: mail.from, to: mail.to }, formatMail(mail, now))
  }
}

export function mailerFor(config: Pick<Config, 'smtpUrl' | 'dataDir'>): Mailer {
  return config.smtpUrl ? new SmtpMailer(config.smtpUrl) : new FileOutbox(outboxDir(config.dataDir))
}

/** The sender address of the server's mails: noreply@ the host of EXTERNAL_URL. */
export function noreplyAddress(externalUrl: string): string {
  return `noreply@${new URL(externalUrl).hostname}`
}

/** Mails in a development outbox, oldest first (for tests and the README). */
export async function readOutbox(dataDir: string): Promise<string[]> {
  const dir = outboxDir(dataDir)
  const names = await readdir(dir).catch(() => [] as string[])
  return Promise.all(names.filter((n) => n.endsWith('.eml')).sort().map((n) => readFile(join(dir, n), 'utf8')))
}
