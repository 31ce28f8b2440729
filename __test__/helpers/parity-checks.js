'use strict'
// The parity comparisons, for one reference and one implementation under
// test: the Jest parity suites and the soak (__test__/soak/) call the same
// functions, so a session that passes one passes the other.
//
// Every check throws an Error naming the call and the first difference;
// none depends on Jest.

const {
  deepFreeze,
  collectObjects,
  findDifference,
  findIdentityDifference,
  describeValue,
  snapshot,
} = require('./compare')

function outcome(fn) {
  try {
    return { threw: false, value: fn() }
  } catch (error) {
    return { threw: true, error }
  }
}

function errorText(error) {
  if (error && typeof error === 'object') return `${error.constructor?.name ?? 'Error'}: ${error.message}`
  return String(error)
}

/** Freezes the inputs and returns the set of every object the caller owns. */
function freezeInputs(...inputs) {
  for (const x of inputs) deepFreeze(x)
  return collectObjects(inputs)
}

/** Snapshots Sets/Maps/Dates (which freezing does not protect) to detect mutation. */
function expectUnchanged(label, before, value) {
  const after = snapshot(value)
  const d = findDifference(before, after, { labels: ['before', 'after'] })
  if (d) throw new Error(`${label}: input was mutated: ${d}`)
}

/**
 * Checks on `ours` against `ref`: the same outcome (both return, or both
 * throw the same kind of error), deep-equal values and, where the caller's
 * objects come back, the very same objects.
 */
function createChecks(ref, ours) {
  /**
   * Calls refFn and oursFn, then requires: same outcome (both return or both throw the
   * same kind of error), deep-equal values, and (when inputObjects is given) identity parity.
   */
  function expectSame(label, refFn, oursFn, inputObjects) {
    const r = outcome(refFn)
    const o = outcome(oursFn)
    if (r.threw || o.threw) {
      if (r.threw && o.threw) {
        const rn = r.error?.constructor?.name
        const on = o.error?.constructor?.name
        if (rn !== on) throw new Error(`${label}: both threw, but reference ${errorText(r.error)} / ours ${errorText(o.error)}`)
        return { ref: undefined, ours: undefined, threw: true }
      }
      if (r.threw) throw new Error(`${label}: reference threw ${errorText(r.error)}, ours returned ${describeValue(o.value)}`)
      throw new Error(`${label}: ours threw ${errorText(o.error)}, reference returned ${describeValue(r.value)}`)
    }
    const diff = findDifference(r.value, o.value)
    if (diff) throw new Error(`${label}: ${diff}`)
    if (inputObjects) {
      const idDiff = findIdentityDifference(r.value, o.value, inputObjects)
      if (idDiff) throw new Error(`${label}: identity: ${idDiff}`)
    }
    return { ref: r.value, ours: o.value, threw: false }
  }

  /** The async twin of expectSame: both promises settle the same way, with deep-equal values. */
  async function expectSameAsync(label, refFn, oursFn) {
    const settle = async (fn) => {
      try {
        return { threw: false, value: await fn() }
      } catch (error) {
        return { threw: true, error }
      }
    }
    const r = await settle(refFn)
    const o = await settle(oursFn)
    if (r.threw !== o.threw) {
      if (r.threw) throw new Error(`${label}: reference rejected with ${errorText(r.error)}, ours resolved ${describeValue(o.value)}`)
      throw new Error(`${label}: ours rejected with ${errorText(o.error)}, reference resolved ${describeValue(r.value)}`)
    }
    if (r.threw) {
      if (r.error?.message !== o.error?.message) throw new Error(`${label}: both rejected, reference ${errorText(r.error)} / ours ${errorText(o.error)}`)
      return { threw: true }
    }
    const diff = findDifference(r.value, o.value)
    if (diff) throw new Error(`${label}: ${diff}`)
    return { ref: r.value, ours: o.value, threw: false }
  }

  function checkPrepareCompaction(entries, settings, options = {}) {
    // options.entryObjects: precomputed collectObjects(entries) (scale tests);
    // options.checkMutation: snapshot-compare the inputs (default true; freezing
    // already protects plain objects and arrays, the snapshot also covers Sets/Dates).
    let inputObjects
    if (options.entryObjects) {
      deepFreeze(settings)
      inputObjects = new Set(options.entryObjects)
      for (const o of collectObjects(settings)) inputObjects.add(o)
    } else {
      inputObjects = freezeInputs(entries, settings)
    }
    const checkMutation = options.checkMutation !== false
    const before = checkMutation ? snapshot([entries, settings]) : null
    const res = expectSame(
      `prepareCompaction(entries[${entries.length}], ${JSON.stringify(settings)})`,
      () => ref.prepareCompaction(entries, settings),
      () => ours.prepareCompaction(entries, settings),
      inputObjects,
    )
    if (checkMutation) expectUnchanged('prepareCompaction', before, [entries, settings])
    return res
  }

  /** Messages as callers see them: entry messages plus those built by buildSessionContext. */
  function messagesFor(entries) {
    const fromEntries = entries.filter((e) => e.type === 'message').map((e) => e.message)
    let built = []
    try {
      built = ref.buildSessionContext(entries).messages
    } catch {
      built = []
    }
    return deepFreeze(fromEntries.concat(built))
  }

  /** getLastAssistantUsage hands back the caller's own usage object, or undefined. */
  function checkLastAssistantUsage(entries) {
    const r = ref.getLastAssistantUsage(entries)
    const o = ours.getLastAssistantUsage(entries)
    if (r !== o) throw new Error(`getLastAssistantUsage: reference ${describeValue(r)}, ours ${describeValue(o)}${r && o ? ' (equal content, different object)' : ''}`)
  }

  /** extractFileOpsFromMessage into a fresh createFileOps(): the same Sets, added to in place. */
  function checkExtractFileOps(message) {
    const rOps = ref.createFileOps()
    const oOps = ours.createFileOps()
    const oSets = [oOps.read, oOps.written, oOps.edited]
    expectSame(`extractFileOpsFromMessage(${message.role})`, () => ref.extractFileOpsFromMessage(message, rOps), () => ours.extractFileOpsFromMessage(message, oOps))
    const d = findDifference(rOps, oOps)
    if (d) throw new Error(`extractFileOpsFromMessage(${message.role} message) fileOps: ${d}`)
    if (oOps.read !== oSets[0] || oOps.written !== oSets[1] || oOps.edited !== oSets[2]) throw new Error('extractFileOpsFromMessage replaced the Sets instead of adding to them')
  }

  /** collectEntriesForBranchSummary: the same ancestor and the session's own entries, in order. */
  function checkCollect(session, oldLeafId, targetId) {
    const label = `collectEntriesForBranchSummary(${describeValue(oldLeafId)}, ${describeValue(targetId)})`
    const r = ref.collectEntriesForBranchSummary(session, oldLeafId, targetId)
    const o = ours.collectEntriesForBranchSummary(session, oldLeafId, targetId)
    const keys = [Object.keys(r).join(','), Object.keys(o).join(',')]
    if (keys[0] !== keys[1]) throw new Error(`${label}: keys ${keys[1]}, reference ${keys[0]}`)
    if (o.commonAncestorId !== r.commonAncestorId) {
      throw new Error(`${label}: commonAncestorId ${describeValue(o.commonAncestorId)}, reference ${describeValue(r.commonAncestorId)}`)
    }
    if (o.entries.length !== r.entries.length) throw new Error(`${label}: ${o.entries.length} entries, reference ${r.entries.length}`)
    r.entries.forEach((entry, i) => {
      if (o.entries[i] !== entry) throw new Error(`${label}: entries[${i}] is not the session's own entry ${entry.id}`)
    })
    return r.entries
  }

  /** prepareBranchEntries: deep-equal, the caller's own messages where the reference passes them on. */
  function checkBranchPreparation(entries, tokenBudget) {
    const label = `prepareBranchEntries(entries[${entries.length}], ${describeValue(tokenBudget)})`
    const r = ref.prepareBranchEntries(entries, tokenBudget)
    const o = ours.prepareBranchEntries(entries, tokenBudget)
    const d = findDifference(r, o)
    if (d) throw new Error(`${label}: ${d}`)
    const callerMessages = new Set(entries.map((e) => e.message).filter(Boolean))
    r.messages.forEach((message, i) => {
      const own = callerMessages.has(message)
      if ((o.messages[i] === message) !== own) {
        throw new Error(`${label}: messages[${i}] ${own ? "is not the caller's object" : 'should be a new object'}`)
      }
    })
    return r
  }

  return {
    ref,
    ours,
    expectSame,
    expectSameAsync,
    checkPrepareCompaction,
    messagesFor,
    checkLastAssistantUsage,
    checkExtractFileOps,
    checkCollect,
    checkBranchPreparation,
  }
}

module.exports = { createChecks, freezeInputs, expectUnchanged, outcome, errorText }
