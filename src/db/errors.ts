// Recognising database errors without importing the driver. Errors arrive
// as Prisma's known-request errors (P2002) or, from driver adapters, with the
// PostgreSQL code (23505) somewhere in their cause chain.

const UNIQUE_CODES = new Set(['P2002', '23505'])

export function isUniqueViolation(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false
  const e = error as { code?: unknown; originalCode?: unknown; kind?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } }
  if (UNIQUE_CODES.has(String(e.code)) || e.originalCode === '23505' || e.kind === 'UniqueConstraintViolation') return true
  return isUniqueViolation(e.cause, depth + 1) || isUniqueViolation(e.meta?.driverAdapterError, depth + 1)
}
