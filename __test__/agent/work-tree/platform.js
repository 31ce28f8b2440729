'use strict'
// Names the native binary for this machine, following the napi-rs convention
// (`<binaryName>.<platform>-<arch>[-<abi>].node`, package `prime-compaction-<suffix>`).

function isMusl() {
  if (process.platform !== 'linux') return false
  try {
    const report = process.report && process.report.getReport()
    const header = report && (typeof report === 'string' ? JSON.parse(report) : report).header
    return !(header && header.glibcVersionRuntime)
  } catch {
    return false
  }
}

function platformSuffix() {
  const { platform, arch } = process
  if (platform === 'linux') return `linux-${arch}-${isMusl() ? 'musl' : 'gnu'}`
  if (platform === 'win32') return `win32-${arch}-msvc`
  return `${platform}-${arch}`
}

module.exports = { platformSuffix, binaryName: 'prime-compaction' }
