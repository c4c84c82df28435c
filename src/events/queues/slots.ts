// Redis Cluster hash slots, for grouping the queue store's commands so that
// no script or multi-key command names keys of two slots. A key's slot is
// CRC16 (XMODEM) of its hash tag (the text between the first "{" and the
// next "}", when not empty) or of the whole key, modulo 16384; every key of
// one queue carries the queue's tag, so its keys share a slot.

const SLOTS = 16384

const CRC16_TABLE = (() => {
  const table = new Uint16Array(256)
  for (let i = 0; i < 256; i++) {
    let crc = i << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
    table[i] = crc
  }
  return table
})()

function crc16(bytes: Uint8Array): number {
  let crc = 0
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ (CRC16_TABLE[((crc >> 8) ^ byte) & 0xff] as number)
  return crc
}

/** The cluster slot of a key (Redis's own rule, hash tags included). */
export function hashSlot(key: string): number {
  const open = key.indexOf('{')
  if (open >= 0) {
    const close = key.indexOf('}', open + 1)
    if (close > open + 1) key = key.slice(open + 1, close)
  }
  return crc16(Buffer.from(key)) % SLOTS
}

/**
 * Groups items by the slot of their key, in first-seen order. With `bySlot`
 * false (one Redis server: there are no slots to respect) everything is one
 * group.
 */
export function groupBySlot<T>(items: T[], keyOf: (item: T) => string, bySlot: boolean): T[][] {
  if (!bySlot) return items.length > 0 ? [items] : []
  const groups = new Map<number, T[]>()
  for (const item of items) {
    const slot = hashSlot(keyOf(item))
    const group = groups.get(slot)
    if (group) group.push(item)
    else groups.set(slot, [item])
  }
  return [...groups.values()]
}
