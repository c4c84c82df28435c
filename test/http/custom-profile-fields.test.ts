import t from 'tap'
import { buildTestApp } from '../support/app.js'
import { as } from '../support/client.js'
import { expectError, expectSuccess } from '../support/expect.js'
import type { CapturedBusItem as BusItem } from '../support/events.js'
import type { Services } from '../../src/services.js'
import { busItemsDuring } from '../support/events.js'

const published = async (services: Services, fn: () => Promise<unknown>): Promise<BusItem[]> => (await busItemsDuring(services, fn)).items

t.test('custom profile fields', async (t) => {
  const { app, fx, services } = await buildTestApp(t)
  const admin = fx.users.admin
  const create = async (params: Record<string, unknown>) => expectSuccess(t, await as(app, admin).post('/realm/profile_fields', params)).id as number
  const list = async () => expectSuccess(t, await as(app, fx.users.member).get('/realm/profile_fields')).custom_fields as Record<string, unknown>[]

  t.test('administrators create fields of every type; everyone lists them in order; the realm is told', async (t) => {
    const items = await published(services, async () => {
      await create({ name: 'Phone', hint: 'Work phone', field_type: 1 })
    })
    const event = items.find((i) => i.event.type === 'custom_profile_fields')
    t.ok(event?.userIds.includes(fx.users.member.id))
    t.match(event?.event, { fields: [{ name: 'Phone', type: 1, hint: 'Work phone', field_data: '', required: false }] })
    await create({ name: 'Biography', field_type: 2 })
    await create({ name: 'Team', field_type: 3, field_data: { a: { text: 'Backend', order: '1' }, b: { text: 'Frontend', order: '2' } } })
    await create({ name: 'Birthday', field_type: 4, display_in_profile_summary: true })
    await create({ name: 'Homepage', field_type: 5 })
    await create({ name: 'Mentor', field_type: 6 })
    await create({ field_type: 7, field_data: { subtype: 'github' } })
    await create({ name: 'Pronouns', field_type: 8 })
    const fields = await list()
    t.same(fields.map((f) => f.name), ['Phone', 'Biography', 'Team', 'Birthday', 'Homepage', 'Mentor', 'GitHub', 'Pronouns'])
    t.same(fields.map((f) => f.type), [1, 2, 3, 4, 5, 6, 7, 8])
    t.equal(fields[3]?.display_in_profile_summary, true)
    t.notOk('display_in_profile_summary' in (fields[0] ?? {}))
    t.same(JSON.parse(String(fields[2]?.field_data)), { a: { text: 'Backend', order: '1' }, b: { text: 'Frontend', order: '2' } })
  })

  t.test('rejects bad definitions', async (t) => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '', field_type: 1 }, 'Label cannot be blank.'],
      [{ name: 'Phone', field_type: 1 }, 'A field with that label already exists.'],
      [{ name: 'x'.repeat(41) }, 'name is too long (limit: 40 characters)'],
      [{ name: 'Nine', field_type: 9 }, 'Invalid field type.'],
      [{ name: 'Choice', field_type: 3, field_data: {} }, 'Field must have at least one choice.'],
      [{ name: 'Site', field_type: 7, field_data: { subtype: 'custom' } }, 'Custom external account must define URL pattern'],
      [{ name: 'Long', field_type: 2, display_in_profile_summary: true }, 'Field type not supported for display in profile summary.'],
    ]
    for (const [params, msg] of cases) expectError(t, await as(app, admin).post('/realm/profile_fields', params), { code: 'BAD_REQUEST', msg })
    expectError(t, await as(app, fx.users.member).post('/realm/profile_fields', { name: 'Mine' }), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
  })

  t.test('administrators edit, reorder and delete fields', async (t) => {
    const id = await create({ name: 'Desk', field_type: 1 })
    expectSuccess(t, await as(app, admin).patch(`/realm/profile_fields/${id}`, { name: 'Desk number', hint: 'Floor and desk' }))
    t.match((await list()).find((f) => f.id === id), { name: 'Desk number', hint: 'Floor and desk' })
    expectError(t, await as(app, admin).patch('/realm/profile_fields/999999', { name: 'x' }), { code: 'BAD_REQUEST', msg: 'Field id 999999 not found.' })
    const ids = (await list()).map((f) => Number(f.id))
    const reversed = [...ids].reverse()
    expectSuccess(t, await as(app, admin).patch('/realm/profile_fields', { order: reversed }))
    t.same((await list()).map((f) => f.id), reversed)
    expectError(t, await as(app, admin).patch('/realm/profile_fields', { order: reversed.slice(1) }), { code: 'BAD_REQUEST', msg: 'Invalid order mapping.' })
    expectSuccess(t, await as(app, admin).delete(`/realm/profile_fields/${id}`))
    t.notOk((await list()).some((f) => f.id === id))
    expectError(t, await as(app, fx.users.member).delete(`/realm/profile_fields/${ids[0]}`), { code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' })
  })

  t.test('people set and remove their own values, shown in profile_data with rendered Markdown', async (t) => {
    const fields = await list()
    const idOf = (name: string) => Number(fields.find((f) => f.name === name)?.id)
    const member = await fx.newUser()
    const items = await published(services, async () => {
      expectSuccess(t, await as(app, member).patch('/users/me/profile_data', {
        data: [
          { id: idOf('Phone'), value: '**555**' },
          { id: idOf('Team'), value: 'a' },
          { id: idOf('Birthday'), value: '1990-04-01' },
          { id: idOf('Homepage'), value: 'https://example.org/me' },
          { id: idOf('Mentor'), value: [fx.users.owner.id] },
        ],
      }))
    })
    const phoneEvent = items.find((i) => (i.event.person as { custom_profile_field?: { id: number } }).custom_profile_field?.id === idOf('Phone'))
    t.same(phoneEvent?.event, {
      type: 'realm_user',
      op: 'update',
      person: { user_id: member.id, custom_profile_field: { id: idOf('Phone'), value: '**555**', rendered_value: '<p><strong>555</strong></p>' } },
    })
    t.ok(phoneEvent?.userIds.includes(fx.users.owner.id))
    const me = expectSuccess(t, await as(app, member).get('/users/me'))
    t.same(me.profile_data[String(idOf('Phone'))], { value: '**555**', rendered_value: '<p><strong>555</strong></p>' })
    t.same(me.profile_data[String(idOf('Team'))], { value: 'a' })
    t.same(me.profile_data[String(idOf('Mentor'))], { value: `[${fx.users.owner.id}]` })

    const removal = await published(services, async () => {
      expectSuccess(t, await as(app, member).delete('/users/me/profile_data', { data: [idOf('Phone')] }))
    })
    t.match(removal[0]?.event, { person: { user_id: member.id, custom_profile_field: { id: idOf('Phone'), value: null } } })
    const after = expectSuccess(t, await as(app, member).get('/users/me'))
    t.notOk(String(idOf('Phone')) in after.profile_data)
  })

  t.test('rejects values that do not fit their field, changing nothing', async (t) => {
    const fields = await list()
    const idOf = (name: string) => Number(fields.find((f) => f.name === name)?.id)
    const member = await fx.newUser()
    const cases: [unknown, string][] = [
      [[{ id: 999999, value: 'x' }], 'Field id 999999 not found.'],
      [[{ id: idOf('Team'), value: 'z' }], "'z' is not a valid choice for 'Team'."],
      [[{ id: idOf('Birthday'), value: 'yesterday' }], 'Birthday is not a date'],
      [[{ id: idOf('Homepage'), value: 'not a url' }], 'Homepage is not a URL'],
      [[{ id: idOf('Mentor'), value: [999999] }], 'Invalid user ID: 999999'],
      [[{ id: idOf('Pronouns'), value: 'x'.repeat(51) }], 'Pronouns is too long (limit: 50 characters)'],
      [[{ id: idOf('Pronouns'), value: 'they/them' }, { id: idOf('Team'), value: 'nope' }], "'nope' is not a valid choice for 'Team'."],
    ]
    for (const [data, msg] of cases) expectError(t, await as(app, member).patch('/users/me/profile_data', { data }), { code: 'BAD_REQUEST', msg })
    t.equal(await services.prisma.customProfileFieldValue.count({ where: { userId: member.id } }), 0)
  })

  t.test('editable_by_user (level 296): only administrators set values of a field users may not edit', async (t) => {
    const open = await create({ name: 'Nickname', field_type: 1 })
    const closed = await create({ name: 'Employee ID', field_type: 1, editable_by_user: false })
    t.match((await list()).find((f) => f.id === open), { editable_by_user: true })
    t.match((await list()).find((f) => f.id === closed), { editable_by_user: false })
    const member = await fx.newUser()
    const refused = { code: 'BAD_REQUEST', status: 400, msg: 'You are not allowed to change this field. Contact an administrator to update it.' }
    expectError(t, await as(app, member).patch('/users/me/profile_data', { data: [{ id: open, value: 'Al' }, { id: closed, value: 'E-1' }] }), refused)
    expectError(t, await as(app, member).delete('/users/me/profile_data', { data: [closed] }), refused)
    t.notOk(await services.prisma.customProfileFieldValue.findFirst({ where: { userId: member.id } }), 'the refused request changed nothing')
    expectSuccess(t, await as(app, admin).patch(`/users/${member.id}`, { profile_data: [{ id: closed, value: 'E-1' }] }))
    expectSuccess(t, await as(app, admin).patch('/users/me/profile_data', { data: [{ id: closed, value: 'E-0' }] }))
    const items = await published(services, () => as(app, admin).patch(`/realm/profile_fields/${closed}`, { editable_by_user: true }))
    t.match(items.find((i) => i.event.type === 'custom_profile_fields')?.event.fields.find((f: { id: number }) => f.id === closed), { editable_by_user: true })
    expectSuccess(t, await as(app, member).patch('/users/me/profile_data', { data: [{ id: closed, value: 'E-2' }] }))
    expectError(t, await as(app, admin).post('/realm/profile_fields', { name: 'Bad', editable_by_user: 'sometimes' }), { code: 'BAD_REQUEST', status: 400 })
  })

  t.test('a required field cannot be emptied', async (t) => {
    const id = await create({ name: 'Location', field_type: 1, required: true })
    const member = await fx.newUser()
    expectSuccess(t, await as(app, member).patch('/users/me/profile_data', { data: [{ id, value: 'Berlin' }] }))
    expectError(t, await as(app, member).patch('/users/me/profile_data', { data: [{ id, value: '' }] }), { code: 'BAD_REQUEST', msg: "Field 'Location' is required." })
  })
})
