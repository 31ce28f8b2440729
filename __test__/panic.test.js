'use strict'
// A panic in the core reaches JS as an Error and Node keeps running.
//
// The trigger, `__panicForTest`, exists only in debug builds (src/panic_for_test.rs
// is compiled under cfg(debug_assertions)), so the published release binary
// cannot be made to panic on purpose. This test builds the debug cdylib with
// cargo (dependencies are already compiled by `cargo test`, which npm test runs
// first), loads it in a child process with process.dlopen, and checks that the
// child survives the panic; an abort would show up as a signal.

const { spawnSync, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const TARGET = process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target')
const LIB = { darwin: 'libprime_compaction.dylib', win32: 'prime_compaction.dll' }[process.platform] || 'libprime_compaction.so'

jest.setTimeout(600_000)

const CHILD = `
const lib = process.argv[1]
const m = { exports: {} }
process.dlopen(m, lib)
const native = m.exports
const out = { hasTrigger: typeof native.__panicForTest === 'function' }
for (let i = 0; i < 3; i++) {
  try {
    native.__panicForTest('deliberate panic ' + i)
    out.returned = true
  } catch (err) {
    out.errors = (out.errors || []).concat({ isError: err instanceof Error, name: err.name, message: err.message })
  }
}
// Still usable after the panics.
out.after = native.estimateTokens({ role: 'user', content: 'abcdefgh' }, native.agentLineIndex('0.78'))
process.stdout.write(JSON.stringify(out))
`

describe('panics', () => {
  let lib

  beforeAll(() => {
    execFileSync('cargo', ['build', '--lib', '--quiet'], { cwd: ROOT, stdio: 'inherit' })
    lib = path.join(TARGET, 'debug', LIB)
    if (!fs.existsSync(lib)) throw new Error(`cargo build did not produce ${lib}`)
  })

  it('a panic in the core becomes a JS Error, three times over, and the addon still works', () => {
    const r = spawnSync(process.execPath, ['-e', CHILD, lib], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, RUST_BACKTRACE: '0' } })
    expect({ signal: r.signal, status: r.status }).toEqual({ signal: null, status: 0 })
    const out = JSON.parse(r.stdout)
    expect(out.hasTrigger).toBe(true)
    expect(out.returned).toBeUndefined()
    expect(out.errors).toHaveLength(3)
    for (const [i, e] of out.errors.entries()) {
      expect(e).toEqual({ isError: true, name: 'Error', message: expect.stringContaining(`internal error (a bug, please report it): deliberate panic ${i}`) })
    }
    expect(out.after).toBe(2)
  })

  it('the release binary has no panic trigger', () => {
    const { platformSuffix, binaryName } = require('../platform.js')
    const binary = path.join(ROOT, `${binaryName}.${platformSuffix()}.node`)
    // Jest's global setup builds it when it is missing (__test__/helpers/fresh-binary.js).
    expect(fs.existsSync(binary)).toBe(true)
    expect(typeof require(binary).__panicForTest).toBe('undefined')
  })
})
