import t from 'tap'
import {
  checkGroupSettingChange,
  checkNamedGroupForSetting,
  groupSettingValuesEqual,
  holdsGroupSetting,
  MAX_GROUP_SETTING_MEMBERS,
  parseGroupSettingChange,
  parseGroupSettingValue,
  permissionConfig,
} from '../../src/domain/group-setting-value.js'
import { ApiError } from '../../src/errors.js'

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn()
    return undefined
  } catch (err) {
    return err instanceof ApiError ? `${err.code}: ${err.msg}` : String(err)
  }
}

t.test('parseGroupSettingValue', async (t) => {
  t.equal(parseGroupSettingValue(7, 's'), 7)
  t.same(parseGroupSettingValue({ direct_members: [3, 1, 3], direct_subgroups: [] }, 's'), { direct_members: [3, 1], direct_subgroups: [] }, 'duplicates go')
  t.equal(parseGroupSettingValue({ direct_members: [], direct_subgroups: [9] }, 's'), 9, 'one subgroup and no member is that group')
  const bad: [string, unknown][] = [
    ['a string', 'x'],
    ['a negative ID', -1],
    ['a fraction', 1.5],
    ['a list', [1]],
    ['null', null],
    ['a missing key', { direct_members: [] }],
    ['an extra key', { direct_members: [], direct_subgroups: [], name: 'x' }],
    ['a non-list', { direct_members: 1, direct_subgroups: [] }],
    ['a non-ID element', { direct_members: ['a'], direct_subgroups: [] }],
    ['too many members', { direct_members: Array.from({ length: MAX_GROUP_SETTING_MEMBERS + 1 }, (_, i) => i), direct_subgroups: [] }],
  ]
  for (const [name, raw] of bad) t.match(codeOf(() => parseGroupSettingValue(raw, 'can_x_group')), /^BAD_REQUEST: Invalid can_x_group: /, name)
})

t.test('parseGroupSettingChange', async (t) => {
  t.same(parseGroupSettingChange({ new: 4 }, 's'), { new: 4 })
  t.same(parseGroupSettingChange({ new: 4, old: { direct_members: [1], direct_subgroups: [] } }, 's'), { new: 4, old: { direct_members: [1], direct_subgroups: [] } })
  t.same(parseGroupSettingChange(4, 's'), { new: 4 }, 'a bare value is the new one')
  t.match(codeOf(() => parseGroupSettingChange({ new: 4, older: 3 }, 's')), /^BAD_REQUEST/)
})

t.test('equality and the old check', async (t) => {
  t.ok(groupSettingValuesEqual({ direct_members: [1, 2], direct_subgroups: [5] }, { direct_members: [2, 1], direct_subgroups: [5] }))
  t.notOk(groupSettingValuesEqual(5, { direct_members: [], direct_subgroups: [5] }))
  t.equal(checkGroupSettingChange(3, { new: 4, old: 3 }), true)
  t.equal(checkGroupSettingChange(3, { new: 3 }), false)
  t.match(codeOf(() => checkGroupSettingChange(3, { new: 4, old: 2 })), /^EXPECTATION_MISMATCH: 'old' value does not match the expected value\.$/)
})

t.test('system groups a setting accepts', async (t) => {
  const config = permissionConfig('role:members', { allowNobodyGroup: false, allowEveryoneGroup: false })
  const sys = (name: string) => ({ name, isSystemGroup: true })
  t.equal(codeOf(() => checkNamedGroupForSetting(sys('role:members'), 's', config)), undefined)
  t.equal(codeOf(() => checkNamedGroupForSetting({ name: 'team', isSystemGroup: false }, 's', config)), undefined)
  t.equal(codeOf(() => checkNamedGroupForSetting(sys('role:nobody'), 's', config)), "BAD_REQUEST: 's' setting cannot be set to 'role:nobody' group.")
  t.equal(codeOf(() => checkNamedGroupForSetting(sys('role:everyone'), 's', config)), "BAD_REQUEST: 's' setting cannot be set to 'role:everyone' group.")
  t.equal(codeOf(() => checkNamedGroupForSetting(sys('role:internet'), 's', config)), "BAD_REQUEST: 's' setting cannot be set to 'role:internet' group.")
  const only = permissionConfig('role:owners', { requireSystemGroup: true, allowNobodyGroup: true, allowEveryoneGroup: false, allowedSystemGroups: ['role:owners', 'role:nobody'] })
  t.equal(codeOf(() => checkNamedGroupForSetting({ name: 'team', isSystemGroup: false }, 's', only)), "SYSTEM_GROUP_REQUIRED: 's' must be a system user group.")
  t.equal(codeOf(() => checkNamedGroupForSetting(sys('role:members'), 's', only)), "BAD_REQUEST: 's' setting cannot be set to 'role:members' group.")
})

t.test('holdsGroupSetting keeps guests out of settings that refuse everyone', async (t) => {
  const noEveryone = permissionConfig('role:members', { allowNobodyGroup: true, allowEveryoneGroup: false })
  const everyone = permissionConfig('role:everyone', { allowNobodyGroup: true, allowEveryoneGroup: true })
  t.equal(holdsGroupSetting(new Set([1, 2]), 2, noEveryone, false), true)
  t.equal(holdsGroupSetting(new Set([1, 2]), 2, noEveryone, true), false)
  t.equal(holdsGroupSetting(new Set([1, 2]), 2, everyone, true), true)
  t.equal(holdsGroupSetting(new Set([1]), 2, everyone, false), false)
})
