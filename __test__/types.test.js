'use strict'
// Type-checks the declaration files: on their own (tsconfig.declarations.json)
// and against each agent version's own declarations (tsconfig.json). Both runs
// must report nothing. Then checks that each entry point declares exactly the
// values it exports.
const { spawnSync } = require('node:child_process')
const path = require('node:path')

const root = path.join(__dirname, '..')
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')

describe.each(['tsconfig.declarations.json', 'tsconfig.json'])('tsc -p __test__/types/%s', (config) => {
  test('type-checks with no diagnostics', () => {
    const run = spawnSync(process.execPath, [tsc, '-p', path.join(__dirname, 'types', config), '--pretty', 'false'], {
      cwd: root,
      encoding: 'utf8',
    })
    // Comparing the output too puts tsc's diagnostics in the failure message.
    expect({ status: run.status, output: `${run.stdout}${run.stderr}`, error: run.error }).toEqual({
      status: 0,
      output: '',
      error: undefined,
    })
  }, 180_000)
})

/**
 * The values (functions and constants) each declaration file exports, as
 * TypeScript's checker resolves them: re-exports (`export { x } from`,
 * `export * from`) count, type-only exports do not.
 */
function declaredValues(files) {
  const ts = require('typescript')
  const program = ts.createProgram(files, {
    noEmit: true,
    types: [],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  })
  const checker = program.getTypeChecker()
  return files.map((file) => {
    const source = program.getSourceFile(file)
    if (!source) throw new Error(`TypeScript did not load ${file}`)
    return checker
      .getExportsOfModule(checker.getSymbolAtLocation(source))
      .filter((symbol) => {
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
        return (target.flags & ts.SymbolFlags.Value) !== 0
      })
      .map((symbol) => symbol.name)
      .sort()
  })
}

// Every entry of package.json `exports` with its declaration, CommonJS and ESM files.
const entries = Object.entries(require('../package.json').exports)
  .filter(([, target]) => typeof target === 'object')
  .map(([name, target]) => ({ name, types: target.types, require: target.require, import: target.import }))

describe('each entry declares exactly the values it exports', () => {
  let declared
  beforeAll(() => {
    const values = declaredValues(entries.map((entry) => path.join(root, entry.types)))
    declared = new Map(entries.map((entry, i) => [entry.name, values[i]]))
  })

  test.each(entries.map((entry) => [entry.name, entry]))('%s', async (_name, entry) => {
    const types = declared.get(entry.name)
    const cjs = Object.keys(require(path.join(root, entry.require))).sort()
    const esm = Object.keys(await import(require('node:url').pathToFileURL(path.join(root, entry.import)).href))
      .filter((k) => k !== 'default')
      .sort()
    // Both lists name the differences, so a failure says which names are missing where.
    expect({
      [`declared in ${entry.types} but not exported by ${entry.require}`]: types.filter((n) => !cjs.includes(n)),
      [`exported by ${entry.require} but not declared in ${entry.types}`]: cjs.filter((n) => !types.includes(n)),
    }).toEqual({
      [`declared in ${entry.types} but not exported by ${entry.require}`]: [],
      [`exported by ${entry.require} but not declared in ${entry.types}`]: [],
    })
    expect(esm).toEqual(cjs)
  })
})
