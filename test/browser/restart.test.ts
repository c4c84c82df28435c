// The app across a restart of an embedded server: its event queue is gone
// with the process, so the app re-registers, refetches the open view (a
// message sent while it was down shows) and receives new messages live.
import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { freePort, givePassword, launchBrowser, openApp } from './browser.js'

t.test('an embedded server restarts under an open app', async (t) => {
  const port = await freePort()
  const externalUrl = `http://localhost:${port}`
  const first = await buildTestApp(t, { config: { externalUrl } })
  await first.app.listen({ port, host: '127.0.0.1' })
  const { fx, services } = first
  const origin = `http://${fx.host}:${port}`
  const member = await fx.user('member')
  const other = await fx.user('otherMember')
  const general = fx.streams.general
  const browser = await launchBrowser(t)
  const { page, errors } = await openApp(t, browser, origin, member, await givePassword(services, member))
  const send = async (app: typeof first.app, content: string) => expectSuccess(t, await as(app, other).post('/messages', { type: 'stream', to: general.id, topic: 'restart', content }))

  await page.goto(`${origin}/#channel/${general.id}/topic/restart`)
  await send(first.app, 'before the restart')
  await page.locator('.message .content', { hasText: 'before the restart' }).waitFor({ timeout: 10_000 })

  await first.app.close()
  await page.locator('header .connection.reconnecting').waitFor({ timeout: 20_000 })
  t.pass('the header shows the lost connection')
  // The same database, a new process's in-memory event system: the app's queue no longer exists.
  const second = await buildTestApp(t, { fixture: fx, config: { externalUrl } })
  await send(second.app, 'sent while the server was down')
  await second.app.listen({ port, host: '127.0.0.1' })
  await page.locator('.message .content', { hasText: 'sent while the server was down' }).waitFor({ timeout: 45_000 })
  await page.locator('header .connection.connected').waitFor({ timeout: 10_000 })
  t.pass('re-registered and refetched the open view')
  await send(second.app, 'after the restart')
  await page.locator('.message .content', { hasText: 'after the restart' }).waitFor({ timeout: 10_000 })
  t.pass('new messages arrive live on the new queue')
  t.equal(await page.locator('.message .content', { hasText: 'before the restart' }).count(), 1, 'the older message once, not twice')
  t.same(errors, [])
})
