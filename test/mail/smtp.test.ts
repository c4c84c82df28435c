// Every mail the server sends goes through nodemailer to SMTP_URL when it is
// set: an invitation reaches a real SMTP server on loopback; unset, the same
// mail lands in DATA_DIR/outbox.
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { startSmtpPeer } from '../support/smtp-peer.js'
import { FileOutbox, SmtpMailer, mailerFor, readOutbox } from '../../src/mail/outbox.js'

t.test('an invitation is sent to the SMTP server of SMTP_URL', async (t) => {
  const peer = await startSmtpPeer()
  t.teardown(() => peer.close())
  const { app, fx } = await buildTestApp(t, { config: { smtpUrl: peer.url } })
  const admin = await fx.user('admin')
  const email = `invitee-${Date.now()}@example.com`
  expectSuccess(t, await as(app, admin).post('/invites', { invitee_emails: email, stream_ids: [] }))
  const [mail] = await peer.waitFor(1)
  t.same(peer.envelopes[0], [email])
  t.match(mail?.subject, fx.realm.name)
  t.match(mail?.text, /https?:\/\/\S+/)
  t.match(mail?.from?.value[0]?.address, /^noreply@/)
})

t.test('mailerFor chooses SMTP when SMTP_URL is set, the outbox otherwise', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'roost-outbox-'))
  t.type(mailerFor({ smtpUrl: 'smtp://127.0.0.1:2525', dataDir }), SmtpMailer)
  const outbox = mailerFor({ smtpUrl: undefined, dataDir })
  t.type(outbox, FileOutbox)
  await outbox.send({ from: 'noreply@localhost', to: 'a@example.com', subject: 'Grüße', text: `long ${'x'.repeat(120)} line é`, html: '<p>hi</p>' }, new Date())
  const [raw] = await readOutbox(dataDir)
  t.match(raw, 'To: a@example.com')
  t.match(raw, `long ${'x'.repeat(120)} line é`, 'quoted-printable decoded when read back')
  t.match(raw, 'text/html')
})
