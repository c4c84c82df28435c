// The reply serializer of every JSON answer: JSON.stringify, except that an
// answer with a top-level RawJson field (present/raw-json.ts) is assembled as
// bytes, that field's parts copied in as they are. Checking the top-level
// fields costs a loop over a handful of keys; deeper RawJson values are left
// to their toJSON().
import { concatParts, RawJson, rawObject } from '../present/raw-json.js'

function hasRawField(payload: object): boolean {
  for (const key in payload) if ((payload as Record<string, unknown>)[key] instanceof RawJson) return true
  return false
}

export function serializeReply(payload: unknown): string | Buffer {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload) || !hasRawField(payload)) return JSON.stringify(payload)
  const members: (Buffer | Buffer[])[] = []
  for (const [key, value] of Object.entries(payload)) {
    if (value instanceof RawJson) {
      members.push([Buffer.from(`${JSON.stringify(key)}:`), ...value.parts])
      continue
    }
    // As JSON.stringify does: members whose value has no JSON form are left out.
    const json = JSON.stringify(value) as string | undefined
    if (json !== undefined) members.push(Buffer.from(`${JSON.stringify(key)}:${json}`))
  }
  const body = rawObject(members)
  return concatParts(body.parts, body.byteLength)
}
