// Deterministic text corpora for the token benchmarks: English prose, code,
// CJK, and a mixed corpus, all generated from a seeded PRNG so every run (and
// every machine) measures the same bytes.

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** mulberry32 (scripts/prng.js): a tiny seeded PRNG returning floats in [0, 1). */
export const prng = require('../scripts/prng.js').mulberry32

const pick = (rnd, xs) => xs[Math.floor(rnd() * xs.length)]

const WORDS = (
  'the of and to a in is it you that he was for on are with as his they be at one have this from or had by ' +
  'word but what some we can out other were all there when up use your how said an each she which do their time ' +
  'if will way about many then them write would like so these her long make thing see him two has look more day ' +
  'could go come did number sound no most people my over know water than call first who may down side been now ' +
  'find any new work part take get place made live where after back little only round man year came show every ' +
  'good me give our under name very through just form sentence great think say help low line differ turn cause ' +
  'much mean before move right boy old too same tell does set three want air well also play small end put home ' +
  'read hand port large spell add even land here must big high such follow act why ask men change went light ' +
  'compaction summary context window token estimate conversation session branch message assistant repository ' +
  'function variable implementation performance benchmark carefully unfortunately nevertheless straightforward'
).split(' ')

/** Sentences and paragraphs of common English words. */
export function prose(bytes, seed = 1) {
  const rnd = prng(seed)
  let out = ''
  while (out.length < bytes) {
    const n = 5 + Math.floor(rnd() * 18)
    const words = []
    for (let i = 0; i < n; i++) words.push(pick(rnd, WORDS))
    if (rnd() < 0.3) words.splice(1 + Math.floor(rnd() * (n - 1)), 0, pick(rnd, ["don't", "it's", "we'll", "they're", '2024', '42%', '"quoted"']))
    let s = words.join(' ')
    s = s[0].toUpperCase() + s.slice(1)
    if (rnd() < 0.2) s = s.replace(' ', ', ')
    out += s + pick(rnd, ['. ', '. ', '. ', '? ', '! ', '.\n\n'])
  }
  return out.slice(0, bytes)
}

let all = null

/**
 * Real source text: TypeScript's compiler (a pinned devDependency, so the
 * bytes do not move with this repository's own edits), cut into seeded slices.
 */
export function code(bytes, seed = 2) {
  all ??= readFileSync(require.resolve('typescript/lib/typescript.js'), 'utf8')
  const rnd = prng(seed)
  let out = ''
  while (out.length < bytes) {
    const start = Math.floor(rnd() * Math.max(1, all.length - 4096))
    out += all.slice(start, start + 4096)
  }
  return out.slice(0, bytes)
}

const CJK_SENTENCES = [
  '这是一个用于测试分词器速度的句子。',
  '我们正在比较两个实现，并确保它们产生完全相同的结果。',
  '上下文窗口快满的时候，代理会把较早的对话压缩成一份摘要。',
  '请先阅读源代码，然后运行测试，最后提交修改。',
  '今日はいい天気ですね。散歩に行きましょう。',
  'このファイルを読み込んで、関数の名前を変更してください。',
  'トークン数の見積もりは、実際の数と比べてどのくらい違いますか？',
  '대화가 길어지면 이전 메시지를 요약합니다.',
  '테스트를 실행하고 결과를 확인하세요.',
  '「設定」を開いて、保存ボタンを押してください。',
  '错误：找不到文件 src/main.rs（第 42 行）。',
]

/** Chinese, Japanese and Korean sentences with CJK punctuation. */
export function cjk(bytes, seed = 3) {
  const rnd = prng(seed)
  let out = ''
  // Lengths here are UTF-16 units; CJK is 3 UTF-8 bytes per unit.
  while (Buffer.byteLength(out) < bytes) {
    out += pick(rnd, CJK_SENTENCES)
    if (rnd() < 0.15) out += '\n'
  }
  return out
}

const EXTRAS = [
  '😀👍🏽 ',
  '🎉🚀✨ done!\n',
  '    \n\n\t  ',
  '{"path":"src/main.rs","oldText":"fn a()","newText":"fn b()"}',
  'Ünïcödé ñame — “smart quotes” … Ω≈ç√∫\n',
  'Привет, мир! Это тест.\n',
  'مرحبا بالعالم\n',
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==\n',
]

/** Prose, code, CJK and odd bits interleaved in seeded chunks. */
export function mixed(bytes, seed = 4) {
  const rnd = prng(seed)
  const parts = []
  let size = 0
  let i = 0
  while (size < bytes) {
    const r = rnd()
    const n = 200 + Math.floor(rnd() * 3000)
    const chunk = r < 0.4 ? prose(n, seed + i) : r < 0.75 ? code(n, seed + i) : r < 0.9 ? cjk(n, seed + i) : pick(rnd, EXTRAS)
    parts.push(chunk)
    size += Buffer.byteLength(chunk)
    i++
  }
  return parts.join('')
}
