// Persisted documents on /graphql, in-process on real databases: automatic persisted queries over
// POST and GET (an anonymous GET by hash is cacheable), and GRAPHQL_TRUSTED_DOCUMENTS=only with the
// REST routes' and the console's documents trusted by construction plus an operator's manifest.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { documentHash, loadTrustedDocuments } from '../src/graphql/plugins/persisted-documents.js'
import { CONSOLE_DOCUMENTS } from '../src/console/documents.js'
import { restRoutes } from '../rest-compat/routes.js'
import { documentText } from '../src/graphql/typed-documents.js'

const persisted = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: documentHash(query) } })

describe.each(targets)('persisted documents on $name', (target) => {
  describe('automatic persisted queries (open, the default)', () => {
    const kit = useKit(target)
    let key: string
    beforeAll(async () => {
      key = (await kit.seed().account()).key
    })
    const post = (body: unknown, withKey = true) => kit.rest('POST', '/graphql', { key: withKey ? key : undefined, body })

    it('asks for an unknown hash once, then answers by hash alone', async () => {
      const query = '{ account { name } }'
      const miss = await post({ extensions: persisted(query) })
      expect(miss.status).toBe(200)
      expect(miss.body.errors[0]).toMatchObject({ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } })
      expect((await post({ query, extensions: persisted(query) })).body.data.account.name).toBe('Acme')
      expect((await post({ extensions: persisted(query) })).body).toEqual({ data: { account: { name: 'Acme' } } })
    })

    it('refuses a hash that is not the query’s, a malformed hash or version, and keeps nothing of them', async () => {
      const query = '{ account { timezone } }'
      const wrong = await post({ query, extensions: persisted('{ account { id } }') })
      expect(wrong.status).toBe(400)
      expect(wrong.body.errors[0].extensions.code).toBe('BAD_REQUEST')
      for (const extensions of [
        { persistedQuery: { version: 2, sha256Hash: documentHash(query) } },
        { persistedQuery: { version: 1, sha256Hash: 'abc' } },
        { persistedQuery: { version: 1, sha256Hash: documentHash(query).toUpperCase() } },
      ]) {
        const bad = await post({ query, extensions })
        expect(bad.status, JSON.stringify(extensions)).toBe(400)
      }
      expect((await post({ extensions: persisted('{ account { id } }') })).body.errors[0].message).toBe('PersistedQueryNotFound')
      expect((await post({ extensions: persisted(query) })).body.errors[0].message).toBe('PersistedQueryNotFound')
    })

    it('does not keep documents past its memory budget', async () => {
      // Over the document limit (32 KiB): refused, and not kept for a later hash-only request.
      const big = `{ __typename } #${'x'.repeat(40_000)}`
      const refused = await post({ query: big, extensions: persisted(big) }, false)
      expect(refused.body.errors[0].message).toContain('longer than')
      expect((await post({ extensions: persisted(big) }, false)).body.errors[0].message).toBe('PersistedQueryNotFound')
      const small = `{ __typename } #${'x'.repeat(30_000)}`
      expect((await post({ query: small, extensions: persisted(small) }, false)).body.data).toEqual({ __typename: 'Query' })
      expect((await post({ extensions: persisted(small) }, false)).body.data).toEqual({ __typename: 'Query' })
    })

    it('answers an anonymous GET by hash with Cache-Control and an ETag; a repeat with If-None-Match gets 304', async () => {
      const query = '{ streamChannels { slug } }'
      const path = `/graphql?extensions=${encodeURIComponent(JSON.stringify(persisted(query)))}`
      expect((await kit.rest('GET', path)).body.errors[0].message).toBe('PersistedQueryNotFound')
      await post({ query, extensions: persisted(query) }, false)
      const first = await kit.rest('GET', path)
      expect(first.status).toBe(200)
      expect(first.body).toEqual({ data: { streamChannels: expect.any(Array) } })
      expect(first.headers.get('cache-control')).toBe('public, max-age=1')
      const etag = first.headers.get('etag')!
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
      const again = await kit.rest('GET', path, { headers: { 'if-none-match': etag } })
      expect(again.status).toBe(304)
      // With a key, or with errors, nothing is marked public.
      expect((await kit.rest('GET', path, { key })).headers.get('cache-control')).toBeNull()
      const failing = await kit.rest('GET', `/graphql?query=${encodeURIComponent('{ account { id } }')}`)
      expect(failing.body.errors[0].extensions.code).toBe('UNAUTHENTICATED')
      expect(failing.headers.get('cache-control')).toBeNull()
    })
  })

  describe('GRAPHQL_TRUSTED_DOCUMENTS=only', () => {
    const own = 'query OwnApp { account { name timezone } }'
    const manifest = join(mkdtempSync(join(tmpdir(), 'gateway-trusted-')), 'manifest.json')
    writeFileSync(manifest, JSON.stringify({ [documentHash(own)]: own }))
    const kit = useKit(target, { env: { GRAPHQL_TRUSTED_DOCUMENTS: 'only', GRAPHQL_TRUSTED_DOCUMENTS_FILE: manifest } })
    let key: string
    beforeAll(async () => {
      key = (await kit.seed().account()).key
    })
    const post = (body: unknown) => kit.rest('POST', '/graphql', { key, body })

    it('refuses any other document with a clear 400, by text or by hash', async () => {
      const other = '{ account { id } }'
      for (const body of [{ query: other }, { query: other, extensions: persisted(other) }]) {
        const refused = await post(body)
        expect(refused.status).toBe(400)
        expect(refused.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_ALLOWED')
        expect(refused.body.errors[0].message).toContain('trusted documents only')
      }
      const byHash = await post({ extensions: persisted(other) })
      expect(byHash.body.errors[0].message).toBe('PersistedQueryNotFound')
    })

    it("answers the manifest's documents, the console's and the REST routes' (by text or hash), and REST itself", async () => {
      expect((await post({ query: own })).body.data.account.name).toBe('Acme')
      expect((await post({ extensions: persisted(own) })).body.data.account.name).toBe('Acme')
      expect((await post({ query: CONSOLE_DOCUMENTS.apiKeys })).body.data.apiKeys).toHaveLength(1)
      const route = restRoutes.find((r) => documentText(r.document).includes('groups'))!
      expect(documentHash(documentText(route.document))).toMatch(/^[0-9a-f]{64}$/)
      expect((await kit.rest('GET', '/api/contacts', { key })).status).toBe(200)
    })

    it('refuses to start with a manifest whose entry is not the hash of its document', () => {
      const broken = join(mkdtempSync(join(tmpdir(), 'gateway-trusted-')), 'broken.json')
      writeFileSync(broken, JSON.stringify({ [documentHash('{ a }')]: '{ b }' }))
      expect(() => loadTrustedDocuments('only', [], broken)).toThrow(/is not the sha256 of its document/)
      writeFileSync(broken, '[1, 2]')
      expect(() => loadTrustedDocuments('only', [], broken)).toThrow(/expected an object/)
      expect(() => loadTrustedDocuments('only', [], join(tmpdir(), 'no-such-manifest.json'))).toThrow(/GRAPHQL_TRUSTED_DOCUMENTS_FILE/)
    })
  })
})
