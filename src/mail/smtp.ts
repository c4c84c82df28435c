// A small SMTP client for SMTP_URL (smtp://[user:pass@]host[:port] or
// smtps:// for implicit TLS): EHLO, AUTH PLAIN when credentials are given,
// one message per connection. Enough for confirmation and invitation mails.
import { connect as netConnect, type Socket } from 'node:net'
import { connect as tlsConnect } from 'node:tls'

export class SmtpError extends Error {}

class Session {
  private buffer = ''
  private waiting: ((line: string) => void)[] = []
  private lines: string[] = []
  private failure: Error | undefined

  constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      this.buffer += chunk
      let at: number
      while ((at = this.buffer.indexOf('\r\n')) >= 0) {
        const line = this.buffer.slice(0, at)
        this.buffer = this.buffer.slice(at + 2)
        const waiter = this.waiting.shift()
        if (waiter) waiter(line)
        else this.lines.push(line)
      }
    })
    socket.on('error', (error) => (this.failure = error))
  }

  private nextLine(): Promise<string> {
    if (this.failure) return Promise.reject(this.failure)
    const line = this.lines.shift()
    if (line !== undefined) return Promise.resolve(line)
    return new Promise((resolve, reject) => {
      this.waiting.push(resolve)
      this.socket.once('error', reject)
      this.socket.once('close', () => reject(new SmtpError('SMTP connection closed')))
    })
  }

  /** Reads one (possibly multi-line) reply and checks its code class. */
  async expect(ok: string): Promise<void> {
    let line = await this.nextLine()
    while (/^\d{3}-/.test(line)) line = await this.nextLine()
    if (!line.startsWith(ok)) throw new SmtpError(`SMTP: unexpected reply '${line}'`)
  }

  async command(text: string, ok: string): Promise<void> {
    this.socket.write(`${text}\r\n`)
    await this.expect(ok)
  }
}

export async function sendSmtp(url: string, envelope: { from: string; to: string }, message: string): Promise<void> {
  const target = new URL(url)
  const secure = target.protocol === 'smtps:'
  const port = Number(target.port || (secure ? 465 : 25))
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s: Socket = secure ? tlsConnect({ host: target.hostname, port, servername: target.hostname }, () => resolve(s)) : netConnect({ host: target.hostname, port }, () => resolve(s))
    s.once('error', reject)
    s.setTimeout(30_000, () => s.destroy(new SmtpError('SMTP timeout')))
  })
  const session = new Session(socket)
  try {
    await session.expect('2')
    await session.command('EHLO roost', '2')
    if (target.username) {
      const token = Buffer.from(`\0${decodeURIComponent(target.username)}\0${decodeURIComponent(target.password)}`).toString('base64')
      await session.command(`AUTH PLAIN ${token}`, '2')
    }
    await session.command(`MAIL FROM:<${envelope.from}>`, '2')
    await session.command(`RCPT TO:<${envelope.to}>`, '2')
    await session.command('DATA', '3')
    const body = message.replace(/\r\n\./g, '\r\n..')
    await session.command(`${body.endsWith('\r\n') ? body : `${body}\r\n`}.`, '2')
    socket.write('QUIT\r\n')
  } finally {
    socket.end()
  }
}
