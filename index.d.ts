// prime-compaction: the newest agent line (1.6); each line has its own entry, agent-<line>.
export * from './agent-1.6'
