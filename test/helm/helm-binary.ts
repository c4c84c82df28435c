// The helm binary for the chart tests: @aws-cdk/asset-kubectl-v20 ships
// helm 3 for linux-x64 inside its Lambda layer zip (lib/layer.zip, entry
// helm/helm). It is extracted once into the temporary directory, keyed by
// the zip's size and modification time, and reused by later runs.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { unzipSync } from 'fflate'

const ENTRY = 'helm/helm'

/** The path of an executable helm, or a reason why there is none on this platform. */
export function helmBinary(): { path: string } | { unavailable: string } {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    return { unavailable: `the packaged helm is for linux-x64, this is ${process.platform}-${process.arch}` }
  }
  const require = createRequire(import.meta.url)
  const zip = path.join(path.dirname(require.resolve('@aws-cdk/asset-kubectl-v20/package.json')), 'lib/layer.zip')
  const { size, mtimeMs } = statSync(zip)
  const dir = path.join(os.tmpdir(), `roost-helm-${size}-${Math.floor(mtimeMs)}`)
  const binary = path.join(dir, 'helm')
  if (!existsSync(binary)) {
    const files = unzipSync(readFileSync(zip), { filter: (file) => file.name === ENTRY })
    const data = files[ENTRY]
    if (!data) throw new Error(`${zip} has no ${ENTRY}`)
    mkdirSync(dir, { recursive: true })
    // Written under a unique name and renamed: concurrent test files never see a partial binary.
    const partial = `${binary}.${process.pid}.partial`
    writeFileSync(partial, data)
    chmodSync(partial, 0o755)
    renameSync(partial, binary)
  }
  return { path: binary }
}
