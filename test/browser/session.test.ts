// The browser session seen from the app: logging out ends the session on the
// server and shows the login page.
import t from 'tap'
import type { Page } from 'playwright-core'
import { buildTestApp } from '../support/app.js'
import { freePort, givePassword, launchBrowser, openApp } from './browser.js'

t.test('the session in the app', async (t) => {
  const port = await freePort()
  const { app, fx, services } = await buildTestApp(t, { config: { externalUrl: `http://localhost:${port}` } })
  await app.listen({ port, host: '127.0.0.1' })
  const origin = `http://${fx.host}:${port}`
  const member = await fx.user('member')
  const password = await givePassword(services, member)
  const browser = await launchBrowser(t)

  /** The status of GET /json/users/me made by the page with its cookies. */
  const ownStatus = (page: Page) => page.evaluate(async () => (await fetch('/json/users/me', { credentials: 'same-origin' })).status)

  t.test('"Log out" ends the session on the server and shows the login page', async (t) => {
    const { page } = await openApp(t, browser, origin, member, password)
    t.equal(await ownStatus(page), 200, 'logged in')
    await Promise.all([page.waitForURL(`${origin}/login`), page.getByRole('button', { name: 'Log out' }).click()])
    t.equal(await ownStatus(page), 401, 'the cookie no longer authenticates')
  })
})
