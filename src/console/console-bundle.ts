// The console's browser code: console/app.tsx and Preact, bundled by esbuild into one ES module the
// first time it is asked for, then kept. The source travels with the service (build.mjs copies
// console/ into dist/), so `npm start`, tsx and the Docker image all serve the same thing.
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'

let bundled: Promise<{ code: string; etag: string }> | undefined

export function consoleBundle(): Promise<{ code: string; etag: string }> {
  bundled ??= (async () => {
    const esbuild = await import('esbuild')
    const result = await esbuild.build({
      // src/console/ here, dist/src/console/ when compiled: console/ is two levels up in both.
      entryPoints: [fileURLToPath(new URL('../../console/app.tsx', import.meta.url))],
      bundle: true,
      minify: true,
      format: 'esm',
      target: 'es2022',
      jsx: 'automatic',
      jsxImportSource: 'preact',
      write: false,
      logLevel: 'silent',
      legalComments: 'none',
    })
    const code = result.outputFiles[0]!.text
    return { code, etag: `"${createHash('sha1').update(code).digest('base64url')}"` }
  })()
  // A failed build is not kept: the next request tries again (and the error reaches the log).
  bundled.catch(() => (bundled = undefined))
  return bundled
}
