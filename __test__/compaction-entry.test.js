'use strict'
// The system message the CLI's compaction entry keeps (cli/session-file.js,
// the binding's compactionSystemMessage): on generated 1.6 sessions, the
// very `systemMessage` that 1.6.0's own SessionManager.appendCompaction
// writes after the same branch. When the agent rebuilds a context from a
// compaction, that field is the only system message it keeps from before
// it (cli.test.js reopens a session the CLI compacted).

const path = require('node:path')
const { pathToFileURL } = require('node:url')

const native = require('../binding.js')
const gen = require('./helpers/generator')
const { checkProperty, NUM_RUNS } = require('./helpers/property')

jest.setTimeout(240_000)

const SESSION_MANAGER_16 = path.join(__dirname, '..', 'node_modules', 'pi-coding-agent-1.6', 'dist', 'core', 'session-manager.js')
const HEADER = { type: 'session', version: 3, id: 'generated', timestamp: '2026-01-01T00:00:00.000Z', cwd: '/tmp' }

let SessionManager
beforeAll(async () => {
  ;({ SessionManager } = await import(pathToFileURL(SESSION_MANAGER_16).href))
})

/** What 1.6.0 writes after the branch `entries` ends with, and what ours gives for that branch: both as JSON. */
function bothSides(entries) {
  const manager = SessionManager.inMemory('/tmp', undefined, [HEADER, ...entries])
  const branch = manager.getBranch()
  const id = manager.appendCompaction('S', branch.at(-1)?.id, 1, undefined, false, undefined)
  const written = manager.getEntry(id)
  const theirs = written.systemMessage === undefined ? null : JSON.stringify(written.systemMessage)
  let ours
  try {
    ours = native.compactionSystemMessage(branch, Date.parse(written.timestamp), native.agentLineIndex('1.6'))
  } catch (error) {
    ours = error
  }
  return { branch, theirs, ours }
}

test('1.6: the systemMessage the agent\'s appendCompaction writes, on generated sessions', () => {
  const seen = { compared: 0, withSystemMessage: 0, rejected: 0 }
  checkProperty(
    '1.6 compaction entry systemMessage',
    [gen.pathEntriesArb({ line: '1.6' })],
    (entries) => {
      // The agent never writes an empty id, and its getBranch() stops at one
      // where its projection (and the CLI's branch) goes on.
      if (entries.some((e) => e?.id === '' || e?.parentId === '')) return
      let sides
      try {
        sides = bothSides(entries)
      } catch {
        // The agent itself cannot take the session (its projection throws).
        return
      }
      const { theirs, ours } = sides
      if (ours instanceof Error) {
        // Only a tool whose name is not a string (1.6 keys its tools by any
        // value) may make ours throw where the agent writes a message.
        expect(ours).toBeInstanceOf(TypeError)
        expect(ours.message).toMatch(/tools(Added|Removed)\[\d+\]\.name/)
        seen.rejected++
        return
      }
      expect(ours).toBe(theirs)
      seen.compared++
      if (theirs !== null) seen.withSystemMessage++
    },
    { numRuns: Math.ceil(NUM_RUNS / 4) },
  )
  expect(seen.compared).toBeGreaterThan(NUM_RUNS / 8)
  expect(seen.withSystemMessage).toBeGreaterThan(NUM_RUNS / 40)
})

test('0.78 writes none, whatever the branch holds', () => {
  const system = { role: 'system', content: 'You are a coding agent.', timestamp: 1 }
  const entries = [{ type: 'message', id: 'a', parentId: null, timestamp: HEADER.timestamp, message: system }]
  expect(native.compactionSystemMessage(entries, 5, native.agentLineIndex('0.78'))).toBeNull()
  expect(JSON.parse(native.compactionSystemMessage(entries, 5, native.agentLineIndex('1.6')))).toEqual({ ...system, timestamp: 5 })
})
