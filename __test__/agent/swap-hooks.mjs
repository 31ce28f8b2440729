// Module resolution hooks for Node's module.register(): every import that
// resolves to one of the agent's own compaction files loads our package's
// entry instead. A plain map from URL to URL; nothing here chooses anything.

let swaps = new Map()

export function initialize(data) {
  swaps = new Map(Object.entries(data.swaps))
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context)
  const target = swaps.get(resolved.url)
  return target === undefined ? resolved : { url: target, format: 'module', shortCircuit: true }
}
