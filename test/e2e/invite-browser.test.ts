// The invitation flow in a real browser: Debian's Chromium, headless, driven
// by playwright-core against a listening Roost node.
import { existsSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { chromium, type Browser } from 'playwright-core'
import { buildTestApp } from '../support/app.js'
import { freePort } from '../browser/browser.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { readOutbox } from '../../src/mail/outbox.js'
import { ROLE } from '../../src/domain/roles.js'

const CHROMIUM = '/usr/bin/chromium'

t.test('an invitee opens the mailed link in Chromium and creates the account', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'roost-invite-browser-'))
  // The server is told its own address: the app's requests after joining pass the CSRF origin check against EXTERNAL_URL.
  const port = await freePort()
  const { app, fx, services } = await buildTestApp(t, { config: { dataDir, externalUrl: `http://localhost:${port}` } })
  await app.listen({ port, host: '127.0.0.1' })

  const email = `browser-invitee@${fx.users.owner.email.split('@')[1]}`
  expectSuccess(t, await as(app, fx.users.admin).post('/invites', { invitee_emails: email, stream_ids: [fx.streams.design.id], invite_as: ROLE.MODERATOR }))
  const mail = (await readOutbox(dataDir)).find((m) => m.includes(`To: ${email}`)) ?? ''
  const mailed = /(http\S+\/join\/[a-z0-9]+)/.exec(mail)?.[1]
  t.ok(mailed, 'the mail carries the link')
  const link = new URL(mailed ?? '')

  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--host-resolver-rules=MAP *.localhost 127.0.0.1',
    ],
  })
  t.teardown(() => browser.close())
  const page = await browser.newPage()

  const opened = await page.goto(link.toString())
  t.equal(opened?.status(), 200)
  t.equal(await page.textContent('#invited-email'), email)

  // A name the server refuses: the form comes back with the reason.
  await page.fill('#full_name', 'X')
  await page.fill('#password', 'browser-password')
  await Promise.all([page.waitForNavigation(), page.click('#submit')])
  t.equal(await page.textContent('#error'), 'Name too short!')

  await page.fill('#full_name', 'Browser Person')
  await page.fill('#password', 'browser-password')
  // Joining ends logged in, in the app.
  await Promise.all([page.waitForURL(`${link.origin}/`), page.click('#submit')])
  await page.waitForSelector('nav#nav', { state: 'attached' })
  t.pass('the new account is logged in to the app')

  const user = await services.prisma.user.findFirstOrThrow({ where: { realmId: fx.realm.id, deliveryEmail: email } })
  t.equal(user.role, ROLE.MODERATOR)
  t.ok(await services.prisma.subscription.findFirst({ where: { userId: user.id, streamId: fx.streams.design.id, active: true } }))

  const reopened = await page.goto(link.toString())
  t.equal(reopened?.status(), 410)
  t.match(await page.textContent('#problem'), /already been used/)
})
