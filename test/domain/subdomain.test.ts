// Subdomain rules for new organizations (upstream check_subdomain_available).
import t from 'tap'
import { checkSubdomain, isReservedSubdomain } from '../../src/domain/subdomain.js'
import { ApiError } from '../../src/errors.js'

function messageFor(subdomain: string): string | undefined {
  try {
    checkSubdomain(subdomain)
    return undefined
  } catch (error) {
    if (error instanceof ApiError) return error.msg
    throw error
  }
}

t.test('accepts lowercase letters, digits and inner hyphens, 3–40 characters', async (t) => {
  for (const ok of ['acme', 'a-b', '123', 'team-42-x', 'z'.repeat(40)]) t.equal(messageFor(ok), undefined, ok)
})

t.test('refuses the rest with the upstream message', async (t) => {
  const cases: [string, RegExp][] = [
    ['ab', /length 3 or greater/],
    ['z'.repeat(41), /at most 40 characters/],
    ['-acme', /cannot start or end with a '-'/],
    ['acme-', /cannot start or end with a '-'/],
    ['Acme', /only have lowercase letters, numbers, and '-'s/],
    ['ac_me', /only have lowercase letters, numbers, and '-'s/],
    ['ac.me', /only have lowercase letters, numbers, and '-'s/],
    ['www', /reserved/],
    ['apis', /reserved/],
  ]
  for (const [subdomain, message] of cases) t.match(messageFor(subdomain), message, subdomain)
})

t.test('reserved names include their plural', async (t) => {
  t.ok(isReservedSubdomain('admin'))
  t.ok(isReservedSubdomain('admins'))
  t.notOk(isReservedSubdomain('acme'))
})
