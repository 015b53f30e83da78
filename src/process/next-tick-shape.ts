// Keeps one of process.nextTick's queue entries alive for the life of the process; src/process/server.ts
// imports this module second, after heap-settings.ts.
import { executionAsyncResource } from 'node:async_hooks'

/**
 * node's process.nextTick builds each queue entry with an object literal whose first two keys are
 * computed (`{ [async_id_symbol]: id, [trigger_async_id_symbol]: id, callback, args }`). V8 remembers
 * the hidden class (map) each of its four definitions starts from, and holds those maps weakly.
 * When full collections run while no entry is alive (V8's memory reducer does so once the process
 * goes quiet after a burst of allocation: after an add-contacts of 1,000 contacts, or the start-up
 * on PostgreSQL), they free the maps; the next entry gets new ones, the remembered maps no longer
 * match, and V8 marks three of the four definitions megamorphic for the life of the process. Node
 * 20 then calls into the runtime for each of them: about ten entries a request, a third of the
 * instructions of a cached now-playing answer (docs/performance.md, "nextTick's hidden classes,
 * kept"). Node 22 loses the maps the same way, at a smaller cost.
 *
 * One entry kept here keeps its map and, through the map's back pointers, the whole chain alive,
 * so every later entry is built along the maps V8 remembered first. Inside a nextTick callback the
 * current async resource is that callback's own queue entry. It is two small objects, never read.
 */
let kept: object | undefined

process.nextTick(() => {
  kept = executionAsyncResource()
})

/** The queue entry this module keeps (for the tests). */
export function keptTickEntry(): object | undefined {
  return kept
}
