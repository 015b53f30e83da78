// V8 settings the service applies to its own process; src/process/server.ts imports this module first.
import v8 from 'node:v8'

/**
 * After each full collection V8 lets the old generation grow to a limit of the live heap times a
 * factor it picks itself, up to 4 when collections are fast: under steady load the process then
 * carries up to three times its live heap of garbage before the next one (about 100 MiB more
 * resident memory under the page-7 load of the peers benchmark). 1.5 keeps that to half the live
 * heap, with no measurable change in requests per second (docs/operations.md, "Memory"). Read by
 * V8 whenever it sets the limit, so it applies from here on; the young generation's size
 * (`--max-semi-space-size`) is fixed when the heap is created and is given on the command line.
 */
v8.setFlagsFromString('--heap-growing-percent=50')
