// The import rules of .dependency-cruiser.cjs (STYLE.md's layers, no circles)
// hold for src/ and web/: dependency-cruiser reads the TypeScript sources.
import { existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { cruise, type IConfiguration, type ICruiseResult } from 'dependency-cruiser'
import extractDepcruiseConfig from 'dependency-cruiser/config-utl/extract-depcruise-config'
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')

t.test('imports flow one way and never in a circle', async (t) => {
  const previous = process.cwd()
  process.chdir(ROOT)
  t.teardown(() => process.chdir(previous))
  const config: IConfiguration = await extractDepcruiseConfig(path.join(ROOT, '.dependency-cruiser.cjs'))
  const roots = ['src', 'web'].filter((dir) => existsSync(path.join(ROOT, dir)))
  const result = await cruise(roots, { ...config.options, validate: true, ruleSet: config }, undefined, { tsConfig: extractTSConfig(path.join(ROOT, 'tsconfig.json')) })
  const output = result.output as ICruiseResult
  const violations = output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' → ')})` : ''}`)
  t.same(violations, [], 'no rule of .dependency-cruiser.cjs is broken')
  t.ok(output.summary.totalCruised > 100, 'the sources were read')
})
