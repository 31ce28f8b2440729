'use strict'
// V8's stack overflow, told apart from other exceptions a read-ahead pass
// catches. A pass that hands a throwing entry to the native side to read
// again must not do so for this one: the native read overflows as well,
// and when the getter calls the package again (a recursion in the
// caller's code), each level read twice doubles the work, 2^depth reads
// before the call ends, where the agents throw at once.

/** The message of V8's RangeError for a full stack, as this process writes it. */
const MESSAGE = (() => {
  const deeper = () => deeper()
  try {
    deeper()
  } catch (error) {
    return error.message
  }
  return undefined
})()

/** Whether `error` is V8's stack overflow (of any realm). */
function isStackOverflow(error) {
  return error !== null && typeof error === 'object' && Object.prototype.toString.call(error) === '[object Error]' && error.name === 'RangeError' && error.message === MESSAGE
}

module.exports = { isStackOverflow }
