// The integer range every parameter is held to unless it declares its own:
// PostgreSQL `integer`, the type of every ID column and of most integer
// columns (docs/input-validation.md). Pure; used by the parameter layer and
// by the actions that decode a JSON text of their own (message recipients,
// retention days).
import { badRequest } from '../errors.js'

export const INT32_MIN = -(2 ** 31)
export const INT32_MAX = 2 ** 31 - 1

/** Whether `n` is a number the integer columns can hold (NaN and ±Infinity cannot). */
export function inInt32Range(n: number): boolean {
  return n >= INT32_MIN && n <= INT32_MAX
}

/** A 400 naming the parameter (`to[1] is too large`) when `n` is outside the range; otherwise nothing. */
export function checkInt32(path: string, n: number): void {
  if (n > INT32_MAX || Number.isNaN(n)) throw badRequest(`${path} is too large`)
  if (n < INT32_MIN) throw badRequest(`${path} is too small`)
}

/**
 * A scalar an action decoded from a JSON text of its own (an element of a
 * message's `to`): numbers within the range, strings without NUL or lone
 * surrogates (PostgreSQL text cannot hold them). 400 naming the path otherwise.
 */
export function checkDecodedScalar(path: string, value: unknown): void {
  if (typeof value === 'number') checkInt32(path, value)
  else if (typeof value === 'string') {
    if (value.includes('\u0000')) throw badRequest(`${path} must not contain null bytes`)
    if (!(value as unknown as { isWellFormed(): boolean }).isWellFormed()) throw badRequest(`${path} is not valid UTF-8`)
  }
}
