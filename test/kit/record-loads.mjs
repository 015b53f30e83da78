// `node --import ./test/kit/record-loads.mjs …`: appends every module URL the process loads to the
// file named by LOADED_MODULES_FILE (a module hook; tests check what a process did or did not load).
import { register } from 'node:module'

if (process.env.LOADED_MODULES_FILE)
  register(
    'data:text/javascript,' +
      encodeURIComponent(
        `import { appendFileSync } from 'node:fs'
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(process.env.LOADED_MODULES_FILE)}, url + '\\n')
  return next(url, context)
}`,
      ),
  )
