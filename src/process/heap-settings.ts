// V8 settings the service applies to its own process; src/process/server.ts imports this module first.
import v8 from 'node:v8'

/**
 * After each full collection V8 lets the old generation grow to a limit of the live heap times a
 * factor it picks itself, up to 4 when collections are fast: under steady load the process then
 * carries up to three times its live heap of garbage before the next one (about 100 MiB more
 * resident memory under the page-7 load of the peers benchmark). 1.2 keeps that to a fifth of the
 * live heap: against 1.5, 10 to 15 MiB less at the peak of `npm run bench -- memory`'s throughput
 * phase and 5 to 10 MiB less over its add-contacts, on both databases, with no measurable change in
 * requests per second or add-contacts time (docs/operations.md, "Memory"). Read by V8 whenever it
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
