// The reply serializer of every JSON answer: JSON.stringify, except that an
// answer with a top-level RawJson field (present/raw-json.ts) is assembled as
// bytes, that field's parts copied in as they are. Checking the top-level
// fields costs a loop over a handful of keys; deeper RawJson values are left
// to their toJSON().
import { concatParts, RawJson } from '../present/raw-json.js'

const OPEN = Buffer.from('{')
const CLOSE = Buffer.from('}')
const COMMA = Buffer.from(',')

function hasRawField(payload: object): boolean {
  for (const key in payload) if ((payload as Record<string, unknown>)[key] instanceof RawJson) return true
  return false
}

export function serializeReply(payload: unknown): string | Buffer {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload) || !hasRawField(payload)) return JSON.stringify(payload)
  const parts: Buffer[] = [OPEN]
  let byteLength = 2
  for (const [key, value] of Object.entries(payload)) {
    let member: Buffer[]
    if (value instanceof RawJson) {
      member = [Buffer.from(`${JSON.stringify(key)}:`), ...value.parts]
    } else {
      // As JSON.stringify does: members whose value has no JSON form are left out.
      const json = JSON.stringify(value) as string | undefined
      if (json === undefined) continue
      member = [Buffer.from(`${JSON.stringify(key)}:${json}`)]
    }
    if (parts.length > 1) {
      parts.push(COMMA)
      byteLength += 1
    }
    for (const part of member) {
      parts.push(part)
      byteLength += part.length
    }
  }
  parts.push(CLOSE)
  return concatParts(parts, byteLength)
}
