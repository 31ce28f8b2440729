// prime-compaction as @earendil-works/pi-coding-agent 1.6.x behaves.
// Interim: the 0.78 declarations, until the 1.6 types land.
export * from './agent-0.78'
