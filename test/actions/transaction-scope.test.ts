// No query may run outside the transaction it is part of: inside an
// `inTransaction` callback only `tx` reaches the database. On PGlite's single
// connection a query on the outer client waits for the open transaction,
// which waits for it (the role → guest change did: 30 s, then a 500).
//
// The types keep helpers honest (they take TxContext, which has no prisma);
// this test checks the callbacks themselves with the type checker: nothing in
// them reads a `prisma` property, and nothing with a `prisma` property (the
// action's context, or a hand-built one) is passed to a parameter that keeps it.
import t from 'tap'
import path from 'node:path'
import ts from 'typescript'
import { ROOT } from '../support/root.js'

function problemsIn(program: ts.Program): string[] {
  const checker = program.getTypeChecker()
  const problems: string[] = []
  // The parameter an argument is passed to may use `prisma` when its declared type has one.
  const parameterHasPrisma = (arg: ts.Expression): boolean => {
    const type = checker.getContextualType(arg)
    return type !== undefined && checker.getTypeAtLocation(arg).getProperty('prisma') !== undefined && type.getProperty('prisma') !== undefined
  }
  const where = (node: ts.Node): string => {
    const file = node.getSourceFile()
    const { line } = file.getLineAndCharacterOfPosition(node.getStart())
    return `${path.relative(ROOT, file.fileName)}:${line + 1}`
  }
  const inspectCallback = (callback: ts.Node): void => {
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAccessExpression(node) && node.name.text === 'prisma') problems.push(`${where(node)}: ${node.getText()} inside a transaction`)
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        for (const arg of node.arguments ?? []) {
          if (parameterHasPrisma(arg)) problems.push(`${where(arg)}: ${arg.getText().slice(0, 60)} handed to code that may query outside the transaction`)
        }
      }
      ts.forEachChild(node, visit)
    }
    visit(callback)
  }
  for (const file of program.getSourceFiles()) {
    if (!file.fileName.startsWith(path.join(ROOT, 'src'))) continue
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'inTransaction') {
        const callback = node.arguments[1]
        if (callback) inspectCallback(callback)
      }
      ts.forEachChild(node, visit)
    }
    visit(file)
  }
  return problems
}

t.test('no inTransaction callback reaches the database except through its tx', async (t) => {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
  if (!config) throw new Error('tsconfig.json not readable')
  const program = ts.createProgram({ rootNames: config.fileNames.filter((f) => f.includes(`${path.sep}src${path.sep}`)), options: config.options })
  const checked = program.getSourceFiles().filter((f) => f.fileName.includes(`${path.sep}src${path.sep}actions${path.sep}`)).length
  t.ok(checked > 20, `the actions were read (${checked} files)`)
  t.same(problemsIn(program), [])
})
