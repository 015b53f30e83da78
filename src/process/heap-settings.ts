// V8 settings the service applies to its own process; src/process/server.ts imports this module first.
import v8 from 'node:v8'

/**
 * After each full collection V8 lets the old generation grow to a limit of the live heap times a
 * factor it picks itself, up to 4 when collections are fast: under steady load the process then
 * carries up to three times its live heap of garbage before the next one (about 100 MiB more
 * resident memory under the page-7 load of the peers benchmark). 1.2 keeps that to a fifth of the
 * live heap: against 1.5, 10 to 15 MiB less at the peak of `npm run bench -- memory`'s throughput
 * phase and 5 to 10 MiB less over its add-contacts, on both databases, with no measurable change in
 * requests per second or add-contacts time; a 10,000-contact add-contacts on PostgreSQL spends about
 * a fifth more CPU on the collector (docs/performance.md, "Round four's goals after the start-up and
 * memory changes"; docs/operations.md, "Memory"). Read by V8 whenever it
 * sets the limit, so it applies from here on; the young generation's size (`--max-semi-space-size`)
 * is fixed when the heap is created and is given on the command line.
 */
v8.setFlagsFromString('--heap-growing-percent=20')

/**
 * A property read or write that has seen more hidden classes than this goes megamorphic: V8 then
 * looks each access up in its global stub cache instead of checking the few classes inline. Node's
 * own HTTP and stream code (the request, response and socket constructors, their `on`, `end` and
 * `headers`) sees more classes in this process once the REST and GraphQL paths, pg's sockets and
 * the fetch adapter's streams have run through it, and V8's default of four sent those sites
 * megamorphic for the process's life (a profile: three times a bare node:http server's time in
 * the megamorphic lookups). Eight keeps most of them polymorphic (sixteen gained no more): a cached
 * now-playing answer after an add-contacts and contact pages took 3.6% fewer instructions, a REST
 * page 3.7% and a GraphQL page 1.8% (docs/performance.md, "Node's own code kept polymorphic").
 * Read by V8 each time it updates an inline cache, so it applies to every site from here on.
 */
v8.setFlagsFromString('--max-valid-polymorphic-map-count=8')

/**
 * Prisma's query compiler is WebAssembly (1.8 MB). V8 compiles each of its functions with its
 * baseline compiler on first call, and again with its optimising compiler, on a background thread,
 * once the function has run about this many bytes of code. With V8's default (1,800,000) the
 * start's one-off work in it (parsing the Prisma schema when the compiler is made, the readiness
 * check's first query) already sends many functions to the optimising compiler: CPU spent before
 * `/readyz` that, on 2 cores, competes with the main thread. Ten times the budget leaves that
 * one-off work on baseline code (the CPU to the first `/readyz` 200 about 100 ms less), while the
 * functions every query runs still reach the optimising compiler: after 2,000 compiled queries a
 * query took as long as with the default (docs/performance.md, "Start-up without the optimising
 * compiler's early work"). V8 reads it when the module is instantiated, after this module.
 */
v8.setFlagsFromString('--wasm-tiering-budget=18000000')
