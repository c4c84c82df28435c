// Shapes a client parses, written down from its source, and a checker that
// lists every place a response does not fit: a missing required key, a null
// where the client casts to a non-nullable type, a wrong JSON type.
//
//   'int' | 'number' | 'string' | 'bool' | 'any'   a required value of that type
//   opt(shape)        the key may be absent or null (the client reads `as T?`)
//   nullable(shape)   the key must be present, its value may be null
//   [shape]           an array whose every element fits
//   { key: shape }    an object with (at least) these keys
//   mapOf(shape, k)   an object whose every value fits; k checks its keys
//   oneOf(…values)    one of these exact values
//   matching(re)      a string matching re
//   anyOf(…shapes)    fits one of these shapes (a union the client switches on)

type SpecialShape =
  | { kind: 'opt'; shape: Shape; presentNull: boolean }
  | { kind: 'map'; shape: Shape; key?: RegExp }
  | { kind: 'oneOf'; values: unknown[] }
  | { kind: 'matching'; re: RegExp }
  | { kind: 'anyOf'; shapes: Shape[] }

/** Wraps the shapes that are not plain objects, so an object shape may have any keys. */
class Special {
  constructor(readonly spec: SpecialShape) {}
}

export type Shape = 'int' | 'number' | 'string' | 'bool' | 'any' | Special | Shape[] | { [key: string]: Shape }

export const opt = (shape: Shape): Shape => new Special({ kind: 'opt', shape, presentNull: false })
export const nullable = (shape: Shape): Shape => new Special({ kind: 'opt', shape, presentNull: true })
export const mapOf = (shape: Shape, key?: RegExp): Shape => new Special({ kind: 'map', shape, key })
export const oneOf = (...values: unknown[]): Shape => new Special({ kind: 'oneOf', values })
export const matching = (re: RegExp): Shape => new Special({ kind: 'matching', re })
export const anyOf = (...shapes: Shape[]): Shape => new Special({ kind: 'anyOf', shapes })

/** Keys of maps keyed by an ID. */
export const intKeys = /^\d+$/

/** Every mismatch between `value` and `shape`, as "path: problem" lines (empty when it fits). */
export function mismatches(value: unknown, shape: Shape, path = '$'): string[] {
  if (typeof shape === 'string') {
    switch (shape) {
      case 'any':
        return value === undefined ? [`${path}: missing`] : []
      case 'int':
        return Number.isInteger(value) ? [] : [`${path}: expected an integer, got ${JSON.stringify(value)}`]
      case 'number':
        return typeof value === 'number' ? [] : [`${path}: expected a number, got ${JSON.stringify(value)}`]
      case 'string':
        return typeof value === 'string' ? [] : [`${path}: expected a string, got ${JSON.stringify(value)}`]
      case 'bool':
        return typeof value === 'boolean' ? [] : [`${path}: expected a boolean, got ${JSON.stringify(value)}`]
    }
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return [`${path}: expected an array, got ${JSON.stringify(value)}`]
    const [element] = shape
    return element === undefined ? [] : value.flatMap((v, i) => mismatches(v, element, `${path}[${i}]`))
  }
  if (shape instanceof Special) {
    const special = shape.spec
    switch (special.kind) {
      case 'opt':
        if (value === null || value === undefined) return special.presentNull && value === undefined ? [`${path}: missing (may be null, not absent)`] : []
        return mismatches(value, special.shape, path)
      case 'map': {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: expected an object, got ${JSON.stringify(value)}`]
        const out: string[] = []
        for (const [k, v] of Object.entries(value)) {
          if (special.key && !special.key.test(k)) out.push(`${path}: key ${JSON.stringify(k)} does not match ${special.key}`)
          out.push(...mismatches(v, special.shape, `${path}[${JSON.stringify(k)}]`))
        }
        return out
      }
      case 'oneOf':
        return special.values.includes(value) ? [] : [`${path}: expected one of ${JSON.stringify(special.values)}, got ${JSON.stringify(value)}`]
      case 'matching':
        return typeof value === 'string' && special.re.test(value) ? [] : [`${path}: expected a string matching ${special.re}, got ${JSON.stringify(value)}`]
      case 'anyOf':
        return special.shapes.some((option) => mismatches(value, option, path).length === 0) ? [] : [`${path}: fits none of ${special.shapes.length} shapes, got ${JSON.stringify(value)}`]
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: expected an object, got ${JSON.stringify(value)}`]
  const record = value as Record<string, unknown>
  return Object.entries(shape as { [key: string]: Shape }).flatMap(([k, s]) => mismatches(record[k], s, `${path}.${k}`))
}
