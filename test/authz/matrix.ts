// The authorization matrix (issue 12 item 7): every route of the route table,
// called by every role (owner, administrator, moderator, member, guest, bot,
// a deactivated user, no credentials) on every kind of target (own, another
// user's, a private channel not joined, another organization's), answers
// exactly what upstream allows. The expectations are data, in
// matrix.rows.ts; this module only runs them (split over the
// matrix-<n>.test.ts files so each stays within the test timeout). A
// route without rows fails.
//
// Rows derived for every route from its auth mode:
// - `user` routes: no credentials → 401 UNAUTHORIZED; a deactivated caller →
//   401 USER_DEACTIVATED; a caller of another organization at this
//   organization's host → 401 UNAUTHORIZED ("Account is not associated with
//   this subdomain").
// Each (row, role) case gets a fresh caller of that role in the route's own
// organization, so a case that changes state never affects another.
import t from 'tap'
import type { Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp, makeFixture } from '../support/app.js'
import { anon, as } from '../support/client.js'
import { bodyOf } from '../support/expect.js'
import { allRoutes } from '../../src/http/routes/index.js'
import { ROLE } from '../../src/domain/roles.js'
import { MATRIX, ROLES, routeKey, type Expect, type Role, type World } from './matrix.rows.js'
import type { User } from '../../src/db/index.js'

const ROLE_VALUE: Record<Exclude<Role, 'bot'>, number> = {
  owner: ROLE.OWNER,
  admin: ROLE.ADMIN,
  moderator: ROLE.MODERATOR,
  member: ROLE.MEMBER,
  guest: ROLE.GUEST,
}

const UNAUTHENTICATED: Expect = { status: 401, code: 'UNAUTHORIZED', msg: 'Not logged in: API authentication or user session required' }
const DEACTIVATED: Expect = { status: 401, code: 'USER_DEACTIVATED', msg: 'Account is deactivated' }
const WRONG_ORGANIZATION: Expect = { status: 401, code: 'UNAUTHORIZED', msg: 'Account is not associated with this subdomain' }

/** ROOST_MATRIX_ONLY="GET /users,POST /users" runs only those routes (while writing rows). */
const ONLY = process.env.ROOST_MATRIX_ONLY?.split(',').map((k) => k.trim())

/** Runs the rows of the routes whose index in the route table is `shard` modulo `shards`. */
export function runAuthorizationMatrix(shard: number, shards: number): void {
  // Hundreds of requests per shard: more than .taprc's per-file default on a busy machine.
  t.setTimeout(900_000)
  if (shard === 0) t.test('every route has rows, and every row names a route', async (t) => {
    const keys = new Set(allRoutes.map(routeKey))
    t.same([...keys].filter((k) => !MATRIX[k]?.length).sort(), [], 'routes without rows')
    t.same(Object.keys(MATRIX).filter((k) => !keys.has(k)).sort(), [], 'rows for routes that do not exist')
  })

  t.test('authorization matrix', async (t) => {
    const { app, services } = await buildTestApp(t)
    const foreign = await makeFixture(services)

    for (const [position, r] of allRoutes.entries()) {
      if (position % shards !== shard) continue
      const key = routeKey(r)
      const rows = MATRIX[key] ?? []
      if (rows.length === 0) continue
      if (ONLY && !ONLY.includes(key)) continue
      t.test(key, async (t) => {
        const fx = await makeFixture(services)
        const newActor = async (role: Role): Promise<User> =>
          role === 'bot' ? fx.newUser({ isBot: true, botOwnerId: fx.users.member.id, fullName: 'Matrix bot' }) : fx.newUser({ role: ROLE_VALUE[role] })
        const world = (actor: User, role: Role | 'none' | 'deactivated'): World => ({ app, services, fx, foreign, actor, role })

        const check = (t: Test, what: string, res: LightMyRequestResponse, expected: Expect | 'allow') => {
          const body = (() => {
            try {
              return bodyOf(res)
            } catch {
              return undefined
            }
          })()
          if (expected === 'allow') {
            t.ok(res.statusCode >= 200 && res.statusCode < 400, `${what}: allowed (got ${res.statusCode} ${res.body.slice(0, 200)})`)
            return
          }
          t.same(
            { status: res.statusCode, code: body?.code, ...(expected.msg !== undefined ? { msg: body?.msg } : {}) },
            { status: expected.status, code: expected.code, ...(expected.msg !== undefined ? { msg: expected.msg } : {}) },
            `${what}: ${expected.status} ${expected.code} (got ${res.body.slice(0, 200)})`,
          )
        }

        // Routes outside /api/v1 (uploaded files) are called at their own path.
        const send = (caller: ReturnType<typeof anon>, req: { path: string; params?: Record<string, unknown>; query?: boolean }) =>
          caller.request(r.method, req.path, req.params ?? {}, { query: req.query, outsideApi: r.outsideApi })

        // One caller per role for the whole route (rows that change their caller ask for a fresh one).
        const actors = new Map<Role, User>()
        const actorFor = async (role: Role, fresh: boolean): Promise<User> => {
          if (fresh) return newActor(role)
          let actor = actors.get(role)
          if (!actor) actors.set(role, (actor = await newActor(role)))
          return actor
        }
        const gone = await newActor('member')
        const deactivation = await as(app, fx.users.owner, fx).delete(`/users/${gone.id}`)
        t.equal(deactivation.statusCode, 200, 'the deactivated caller was deactivated')

        for (const [index, row] of rows.entries()) {
          const label = `row ${index + 1} (${row.target})`
          for (const role of ROLES) {
            const actor = await actorFor(role, row.freshActor === true)
            const req = await row.request(world(actor, role))
            const expected = row.allow.includes(role) ? 'allow' : (row.denyFor?.[role] ?? row.deny ?? { status: 400, code: 'BAD_REQUEST' })
            check(t, `${label} as ${role}`, await send(as(app, actor, fx), req), expected)
          }
          // Authentication comes before everything a route does: its generic rows are checked once, with the first row's request.
          if (r.auth === 'user' && index === 0) {
            const someone = await actorFor('member', row.freshActor === true)
            const req = await row.request(world(someone, 'member'))
            check(t, `${label} without credentials`, await send(anon(app, fx), req), UNAUTHENTICATED)
            check(t, `${label} as a deactivated user`, await send(as(app, gone, fx), req), DEACTIVATED)
            check(t, `${label} with another organization's credentials`, await send(as(app, foreign.users.member, fx), req), WRONG_ORGANIZATION)
          } else if (r.auth !== 'user' && row.anonymous !== undefined) {
            const req = await row.request(world(fx.users.member, 'none'))
            check(t, `${label} without credentials`, await send(anon(app, fx), req), row.anonymous)
          }
        }
      })
    }
  })
}
