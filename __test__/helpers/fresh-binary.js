'use strict'
// Jest's global setup: before any suite loads the addon, a checkout whose
// Rust sources are newer than its binary builds it once, so every suite
// tests the sources as they are, and the release suite's `pack:release`
// does not relink the binary while other suites have it loaded. With
// PRIME_PREBUILT set (the release workflow, testing a binary built in
// another job) nothing is built.

const { buildIfStale } = require('../../scripts/pack-release.js')

module.exports = () => {
  if (!process.env.PRIME_PREBUILT) buildIfStale()
}
