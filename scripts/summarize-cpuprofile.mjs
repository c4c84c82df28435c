// Summarizes a V8 .cpuprofile (node --cpu-prof) by self time: top functions
// and totals per package (node_modules/<pkg>, node: internals, Roost's own
// dist/src, GC and idle).
//   node scripts/summarize-cpuprofile.mjs FILE.cpuprofile [TOP=40]
import { readFileSync } from 'node:fs'

const file = process.argv[2]
const top = Number(process.argv[3] ?? 40)
const profile = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const self = new Map()
const deltas = profile.timeDeltas
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i]
  self.set(id, (self.get(id) ?? 0) + (deltas[i] ?? 0))
}

function packageOf(url, name) {
  if (!url) return name.startsWith('(') ? name : '(native)'
  const modules = url.lastIndexOf('node_modules/')
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/')
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]
  }
  if (url.startsWith('node:')) return 'node:internal'
  const src = url.indexOf('/dist/')
  if (src >= 0) return url.slice(src + 1).split('/').slice(0, 3).join('/')
  return url
}

const byFunction = new Map()
const byPackage = new Map()
let total = 0
for (const [id, us] of self) {
  const node = byId.get(id)
  const { functionName, url, lineNumber } = node.callFrame
  const name = functionName || '(anonymous)'
  const key = `${name} ${url ? url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\//, 'dist/') : ''}:${lineNumber + 1}`
  byFunction.set(key, (byFunction.get(key) ?? 0) + us)
  const pkg = packageOf(url, name)
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us)
  total += us
}
const idle = [...byId.values()].filter((n) => n.callFrame.functionName === '(idle)').reduce((s, n) => s + (self.get(n.id) ?? 0), 0)
const busy = total - idle
const pct = (us) => `${((100 * us) / busy).toFixed(1).padStart(5)} %`
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (percentages of busy time)\n`)
console.log('by package (self time)')
for (const [pkg, us] of [...byPackage].filter(([p]) => p !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${pct(us)}  ${(us / 1e3).toFixed(0).padStart(7)} ms  ${pkg}`)
console.log(`\ntop ${top} functions (self time)`)
for (const [key, us] of [...byFunction].filter(([k]) => !k.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${(us / 1e3).toFixed(0).padStart(7)} ms  ${key}`)
