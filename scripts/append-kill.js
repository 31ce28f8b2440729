#!/usr/bin/env node
'use strict'
// How a SIGKILL cuts an append: a child appends long lines to a file with
// appendFileSync, as the agent's SessionManager appends each entry, and is
// killed after a random 5 to 25 ms. Prints how many files end in a cut line,
// and how many of those end at a multiple of 4,096 bytes (Linux checks for a
// fatal signal between the pages of a write to a file).
//
// Usage: node scripts/append-kill.js [runs] [line KiB]   (default 200 runs, 200 KiB)

const { fork } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

if (process.argv[2] === '--append') {
  const line = `${JSON.stringify({ type: 'message', text: 'é'.repeat(1000) + 'x'.repeat(Number(process.argv[4]) * 1024) })}\n`
  process.send('ready')
  for (;;) fs.appendFileSync(process.argv[3], line)
}

async function main() {
  const runs = Number(process.argv[2] ?? 200)
  const kib = Number(process.argv[3] ?? 200)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'append-kill-'))
  let cut = 0
  let atPage = 0
  try {
    for (let i = 0; i < runs; i++) {
      const file = path.join(dir, `s${i}.jsonl`)
      const child = fork(__filename, ['--append', file, String(kib)])
      await new Promise((resolve) => child.once('message', resolve))
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20))
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
      const bytes = fs.readFileSync(file)
      if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) {
        cut++
        if (bytes.length % 4096 === 0) atPage++
      }
      fs.rmSync(file)
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  console.log(`${runs} runs, ${kib} KiB lines: ${cut} files end in a cut line, ${atPage} of them at a multiple of 4,096 bytes`)
}

main()
