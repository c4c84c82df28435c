// The repository root, for tests that read its files or start its compiled
// entry points: every test module runs from dist/test/<dir>/, three levels down.
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
