// `node --import prime-compaction/register ...` (on Bun, `bun --preload
// prime-compaction/register ...`): the pi agent this process runs (either
// line; its own `pi` command too) loads prime-compaction in place of its
// own compaction module. See lib/agent-hooks.mjs.
import { registerAgentSwap } from './lib/agent-hooks.mjs'

registerAgentSwap()
