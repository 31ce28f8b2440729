'use strict'
// V8's stack overflow, told apart from other exceptions a read-ahead pass
// catches. A pass that hands a throwing entry to the native side to read
// again must not do so for this one: the native read overflows as well,
// and where the getter calls the package again (a recursion in the
// caller's code), every level would read every level below it twice.

/** V8's message for a full stack (V8's messages are not translated). */
const MESSAGE = 'Maximum call stack size exceeded'

/** Whether `error` is V8's stack overflow (of any realm). Reads nothing that can throw past it. */
function isStackOverflow(error) {
  try {
    return error !== null && typeof error === 'object' && Object.prototype.toString.call(error) === '[object Error]' && error.name === 'RangeError' && error.message === MESSAGE
  } catch {
    return false
  }
}

module.exports = { isStackOverflow }
