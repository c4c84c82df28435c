// A real SMTP server on loopback (the smtp-server library) for tests: every
// mail it accepts is parsed with mailparser and kept. `failing` answers every
// mail with a temporary error (a mail server that refuses), `close()` stops it.
import { SMTPServer } from 'smtp-server'
import { simpleParser, type ParsedMail } from 'mailparser'
import type { AddressInfo } from 'node:net'

export interface SmtpPeer {
  url: string
  received: ParsedMail[]
  /** Envelope recipients of each received mail. */
  envelopes: string[][]
  failing: boolean
  /** Resolves when `count` mails have been received in total. */
  waitFor(count: number, timeoutMs?: number): Promise<ParsedMail[]>
  close(): Promise<void>
}

export async function startSmtpPeer(): Promise<SmtpPeer> {
  const received: ParsedMail[] = []
  const envelopes: string[][] = []
  const waiters: (() => void)[] = []
  const peer: SmtpPeer = {
    url: '',
    received,
    envelopes,
    failing: false,
    waitFor(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < count) return false
          resolve(received)
          return true
        }
        if (check()) return
        const timer = setTimeout(() => reject(new Error(`only ${received.length} of ${count} mails received`)), timeoutMs)
        waiters.push(() => {
          if (check()) clearTimeout(timer)
        })
      })
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      if (peer.failing) {
        stream.resume()
        stream.on('end', () => callback(Object.assign(new Error('try again later'), { responseCode: 451 })))
        return
      }
      simpleParser(stream)
        .then((mail) => {
          received.push(mail)
          envelopes.push(session.envelope.rcptTo.map((r) => r.address))
          callback()
          for (const w of [...waiters]) w()
        })
        .catch((error: Error) => callback(error))
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  peer.url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`
  return peer
}
