// CommonJS flavour of usage-0.78.mts: `import x = require()` is how TypeScript spells require().

import pc = require('prime-compaction/agent-0.78')

const settings: pc.CompactionSettings = { ...pc.DEFAULT_COMPACTION_SETTINGS, keepRecentTokens: 10000 }
const fileOps: pc.FileOperations = pc.createFileOps()
const lists: { readFiles: string[]; modifiedFiles: string[] } = pc.computeFileLists(fileOps)
const suffix: string = pc.formatFileOperations(lists.readFiles, lists.modifiedFiles)
const prepared: pc.CompactionPreparation | undefined = pc.prepareCompaction([], settings)
const prefix: string = pc.COMPACTION_SUMMARY_PREFIX + pc.SUMMARIZATION_SYSTEM_PROMPT
void [suffix, prepared, prefix]
