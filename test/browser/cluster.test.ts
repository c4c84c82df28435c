// The app on a two-node cluster (PostgreSQL + Redis): a message sent in a
// browser on node B appears live in a browser on node A; node A restarts
// and its browser reconnects to the same queue and keeps receiving.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { buildTestApp, type TestApp } from '../support/app.js'
import { openDatabase } from '../../src/db/client.js'
import { applyMigrations } from '../../src/db/migrate.js'
import { as } from '../support/client.js'
import { expectSuccess } from '../support/expect.js'
import { freePort, givePassword, launchBrowser, openApp } from './browser.js'

// scripts/test.mjs sets it for the browser phase (the other browser files run on embedded PGlite).
const DATABASE_URL = process.env.ROOST_BROWSER_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/roost_test'

t.test('two nodes, two browsers', async (t) => {
  const redisPrefix = `test:${randomUUID()}`
  // Each node is told its own address: the login's CSRF check compares the browser's Origin with EXTERNAL_URL.
  const node = async (port: number, fixture?: TestApp['fx']): Promise<TestApp & { origin: string }> => {
    const database = await openDatabase({ databaseUrl: DATABASE_URL })
    await applyMigrations(database)
    t.teardown(() => database.close())
    const built = await buildTestApp(t, { bus: 'redis', redisPrefix, database, fixture, config: { databaseUrl: DATABASE_URL, externalUrl: `http://localhost:${port}` } })
    await built.app.listen({ port, host: '127.0.0.1' })
    return { ...built, origin: `http://${built.fx.host}:${port}` }
  }
  const a = await node(await freePort())
  const b = await node(await freePort(), a.fx)
  const member = await a.fx.user('member')
  const other = await a.fx.user('otherMember')
  const general = a.fx.streams.general
  const browser = await launchBrowser(t)
  const ann = await openApp(t, browser, a.origin, member, await givePassword(a.services, member))
  const bob = await openApp(t, browser, b.origin, other, await givePassword(a.services, other))

  t.test('sent in the browser on node B, shown live in the browser on node A', async (t) => {
    await ann.page.click(`nav a[href="#channel/${general.id}"]`)
    await bob.page.goto(`${b.origin}/#channel/${general.id}/topic/cluster`)
    await bob.page.waitForSelector('.compose textarea')
    await bob.page.fill('.compose textarea', 'across the cluster')
    await bob.page.keyboard.press('Enter')
    await ann.page.locator('.message .content', { hasText: 'across the cluster' }).waitFor({ timeout: 10_000 })
    t.pass('arrived on node A')
  })

  t.test('node A restarts; its browser reconnects and receives what was sent meanwhile', async (t) => {
    const port = (a.app.server.address() as AddressInfo).port
    await a.app.close()
    await ann.page.locator('header .connection.reconnecting').waitFor({ timeout: 20_000 })
    expectSuccess(t, await as(b.app, other).post('/messages', { type: 'stream', to: general.id, topic: 'cluster', content: 'sent while node A was down' }))
    await node(port, a.fx)
    await ann.page.locator('.message .content', { hasText: 'sent while node A was down' }).waitFor({ timeout: 45_000 })
    await ann.page.locator('header .connection.connected').waitFor({ timeout: 10_000 })
    t.pass('reconnected to the same queue, nothing lost')
  })

  t.test('no uncaught error in either page', async (t) => {
    t.same(ann.errors, [])
    t.same(bob.errors, [])
  })
})
