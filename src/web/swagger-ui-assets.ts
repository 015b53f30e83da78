// Swagger UI's files, served from the installed swagger-ui-dist package so the API reference works
// without internet access. The version is in the URL, so the files can be cached for good.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)
const packageJson = require.resolve('swagger-ui-dist/package.json')
const directory = dirname(packageJson)

export const swaggerUiVersion: string = (require(packageJson) as { version: string }).version

/** The files the reference page loads, and their content types. */
const FILES: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
}

export const ASSETS_PATH = `/api/docs/assets/${swaggerUiVersion}`

const loaded = new Map<string, Buffer>()

/** The asset named by `path` (under ASSETS_PATH), or null when it is not one of ours. */
export function swaggerUiAsset(path: string): Response | null {
  if (!path.startsWith(ASSETS_PATH + '/')) return null
  const name = path.slice(ASSETS_PATH.length + 1)
  const type = FILES[name]
  if (!type) return null
  // Read on first use: the bundle is 1.5 MB that most processes never serve.
  let body = loaded.get(name)
  if (!body) loaded.set(name, (body = readFileSync(join(directory, name))))
  return new Response(new Uint8Array(body), {
    headers: { 'Content-Type': type, 'Content-Length': String(body.byteLength), 'Cache-Control': 'public, max-age=31536000, immutable' },
  })
}
