// CommonJS flavour of usage-1.6.mts: `import x = require()` is how TypeScript spells require().

import pc = require('prime-compaction/agent-1.6')
import bare = require('prime-compaction')

const settings: pc.CompactionSettings = { ...pc.DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 10000 }
const fileOps: pc.FileOperations = pc.createFileOps()
const lists: { readFiles: string[]; modifiedFiles: string[] } = pc.computeFileLists(fileOps)
const suffix: string = pc.formatFileOperations(lists.readFiles, lists.modifiedFiles)
const prepared: pc.CompactionPreparation | undefined = bare.prepareCompaction([], settings)
const prefix: string = pc.COMPACTION_SUMMARY_PREFIX + pc.SUMMARIZATION_SYSTEM_PROMPT
const system: bare.Message = { role: 'system', content: [{ type: 'text', text: 'prompt' }], timestamp: 0 }
const tokens: number = pc.estimateTokens(system)
const failure: string | undefined = pc.getSummarizationFailure(
  {
    role: 'assistant',
    content: [],
    api: 'pi-messages',
    provider: 'pi',
    model: 'm',
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: 'length',
    timestamp: 0,
  },
  'Summarization',
)
void [suffix, prepared, prefix, tokens, failure]
