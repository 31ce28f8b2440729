'use strict'
// A plain-JS statement of the spec's transcript format and summary
// projection, written from the spec for the tests to check the native code
// against. Input: LLM messages (run the reference's convertToLlm first).

const TOOL_RESULT_MAX_CHARS = 2000

const isHigh = (u) => u >= 0xd800 && u <= 0xdbff
const isLow = (u) => u >= 0xdc00 && u <= 0xdfff

/** The first `n` units, one fewer rather than half a surrogate pair. */
function safeHead(s, n) {
  if (s.length <= n) return s
  let end = n
  if (end > 0 && isHigh(s.charCodeAt(end - 1)) && isLow(s.charCodeAt(end))) end--
  return s.slice(0, end)
}

function truncate(text) {
  if (text.length <= TOOL_RESULT_MAX_CHARS) return text
  const kept = safeHead(text, TOOL_RESULT_MAX_CHARS)
  return `${kept}\n\n[... ${text.length - kept.length} more characters truncated]`
}

const textOf = (blocks) =>
  blocks
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('')

function specSerialize(messages, options = {}) {
  const reasoning = options.reasoning !== false
  const parts = []
  for (const msg of messages) {
    if (msg.role === 'user') {
      const content = typeof msg.content === 'string' ? msg.content : textOf(msg.content)
      if (content) parts.push(`[User]: ${content}`)
    } else if (msg.role === 'assistant') {
      const text = []
      const thinking = []
      const calls = []
      for (const block of msg.content) {
        if (block.type === 'text') text.push(block.text)
        else if (block.type === 'thinking') {
          const t = block.thinking == null ? '' : String(block.thinking)
          if (t && !block.redacted) thinking.push(t)
        } else if (block.type === 'toolCall') {
          const args = Object.entries(block.arguments)
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(', ')
          calls.push(`${block.name}#${block.id}(${args})`)
        }
      }
      if (reasoning && thinking.length > 0) parts.push(`[Assistant reasoning]: ${thinking.join('\n')}`)
      if (text.length > 0) parts.push(`[Assistant]: ${text.join('\n')}`)
      if (calls.length > 0) parts.push(`[Assistant tool calls]: ${calls.join('; ')}`)
    } else if (msg.role === 'toolResult') {
      const content = textOf(msg.content)
      if (content) {
        parts.push(`[Tool result ${msg.toolName}#${msg.toolCallId} error=${Boolean(msg.isError)}]: ${truncate(content)}`)
      }
    }
  }
  return parts.join('\n\n')
}

module.exports = { specSerialize, safeHead, TOOL_RESULT_MAX_CHARS }
