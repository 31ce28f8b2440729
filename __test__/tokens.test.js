'use strict'
// countTokens against js-tiktoken (the pure JS port of tiktoken), on
// generated strings: unicode of every plane, emoji sequences, lone surrogates,
// whitespace runs, code, and the text of special tokens. Our count must equal
// js-tiktoken's `encode(text, [], []).length` (special tokens as plain text;
// js-tiktoken's plain `encode(text)` throws on them instead).
//
// TOKENS_RUNS (default 300) sets the number of strings per encoding.

const fc = require('fast-check')
const { countTokens } = require('../agent-0.78')

function loadJsTiktoken() {
  try {
    const { Tiktoken } = require('js-tiktoken/lite')
    return {
      o200k_base: new Tiktoken(require('js-tiktoken/ranks/o200k_base')),
      cl100k_base: new Tiktoken(require('js-tiktoken/ranks/cl100k_base')),
    }
  } catch (err) {
    // Fail loudly: without the oracle this suite would check nothing.
    throw new Error(
      'js-tiktoken is required for __test__/tokens.test.js but could not be loaded ' +
        `(${err.message.split('\n')[0]}). Install the dev dependencies: npm install`,
    )
  }
}

const oracle = loadJsTiktoken()
const RUNS = Number(process.env.TOKENS_RUNS || 300)

jest.setTimeout(120_000)

const ATOMS = [
  'a', 'Z', 'é', 'É', 'ß', 'ǅ', 'Ǆ', 'ʰ', 'ſ', 'K', 'İ', 'ı', 'Ω', 'ﬀ', '𝔸',
  '中', '文', 'ー', 'カ', '한', 'ا', 'ש', '\u0301', '\u0903', '\u200d',
  '1', '٣', '½', 'Ⅻ', '¹',
  ' ', '  ', '\t', '\n', '\r\n', '\r', '\u000b', '\u000c', '\u00a0', '\u0085', '\ufeff', '\u2028', '\u3000', '\u200b',
  '!', '.', '/', '//', "'", "'s", "'S", "'ll", "'Re", "'ve", "'D", "'ſ", '"', '{', '}', '(', ')', ';', '=>', '#', '€',
  '😀', '👍🏽', '👨‍👩‍👧', '🇫🇷', '\ud83d', '\ude00', '\ufffd', '\u0000',
  '<|endoftext|>', '<|endofprompt|>', '<|fim_prefix|>',
]

const CODE = [
  'function f(x) {\n  return x * 2;\n}\n',
  'const { a, b } = require("./c.js");',
  'fn main() -> Result<(), Box<dyn Error>> {\n    Ok(())\n}',
  'SELECT id, name FROM users WHERE id = $1;',
  '    if (a && b) {\n\t\tlog(`${a}/${b}`)\n    }\r\n',
  'https://example.com/path?q=1&r=%20',
  'git commit -m "fix: don\'t crash"',
  '{"path":"src/main.rs","limit":20}',
]

const lone = fc.integer({ min: 0xd800, max: 0xdfff }).map((u) => String.fromCharCode(u))
const unit = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ATOMS) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 4 }) },
  { weight: 1, arbitrary: lone },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)) },
  { weight: 1, arbitrary: fc.stringMatching(/^[ \t\n\r]{1,12}$/) },
  { weight: 2, arbitrary: fc.constantFrom(...CODE) },
  { weight: 2, arbitrary: fc.lorem({ maxCount: 3 }) },
)
const text = fc.array(unit, { maxLength: 40 }).map((parts) => parts.join(''))

function expectSameCount(s, encoding) {
  const expected = oracle[encoding].encode(s, [], []).length
  const got = countTokens(s, encoding)
  if (got !== expected) {
    throw new Error(`${encoding}: countTokens(${JSON.stringify(s)}) = ${got}, js-tiktoken says ${expected}`)
  }
}

describe.each(['o200k_base', 'cl100k_base'])('countTokens(text, %s) equals js-tiktoken', (encoding) => {
  test('generated strings', () => {
    fc.assert(
      fc.property(text, (s) => expectSameCount(s, encoding)),
      { numRuns: RUNS },
    )
  })

  test('fixed edge cases', () => {
    for (const s of ['', ...ATOMS, ...CODE, 'a'.repeat(3000), ' '.repeat(1000) + 'x', 'ab'.repeat(2000)]) {
      expectSameCount(s, encoding)
    }
  })

  // Pieces over 256 bytes merge through the heap: random runs of letters,
  // of CJK characters (three bytes each) and of mixed-case letters, several
  // to a text (the merges' buffers are kept from one piece to the next).
  test('long pieces', () => {
    let seed = 11
    const pick = (chars) => chars[(seed = (seed * 1103515245 + 12345) % 2147483648) % chars.length]
    const run = (chars, n) => Array.from({ length: n }, () => pick(chars)).join('')
    const alphabets = ['etaoinshrdlu', '的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年', 'aAbBzZqQ', 'xy']
    for (let k = 0; k < 12; k++) {
      const chars = alphabets[k % alphabets.length]
      const pieces = [run(chars, 260 + 40 * k), run(chars, 90), run(chars, 700 - 30 * k)]
      expectSameCount(pieces.join(k % 2 ? '。' : ' '), encoding)
    }
  })
})

// Native errors come from Node's main realm, not Jest's sandbox, so
// `toThrow(TypeError)` would compare against the wrong constructor.
function thrown(f) {
  try {
    f()
  } catch (err) {
    return err
  }
  throw new Error('expected a throw')
}

describe('countTokens arguments', () => {
  test('encoding defaults to o200k_base', () => {
    expect(countTokens('你好，世界')).toBe(3)
    expect(countTokens('你好，世界', undefined)).toBe(3)
    expect(countTokens('你好，世界', 'cl100k_base')).toBe(6)
  })

  test('a non-string text is a TypeError naming it', () => {
    for (const bad of [undefined, null, 5, {}, ['a'], Symbol('s')]) {
      const err = thrown(() => countTokens(bad))
      expect(err.name).toBe('TypeError')
      expect(err.message).toMatch(/^text: expected a string/)
    }
  })

  test('an unknown or non-string encoding is a TypeError naming it', () => {
    for (const bad of ['gpt2', 'O200K_BASE', '', null, 3]) {
      const err = thrown(() => countTokens('x', bad))
      expect(err.name).toBe('TypeError')
      expect(err.message).toMatch(/^encoding: /)
    }
  })
})
