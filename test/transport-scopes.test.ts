// Restricted keys on every door (issue 54, item 1): over WebSocket (graphql-ws) and Server-Sent
// Events (graphql-sse), each driven by its own npm client against a real HTTP server with its
// WebSocket door, a key without the scope gets FORBIDDEN naming it for a subscription, a query
// and a mutation, and nothing changes; a key with the scope gets its answer and its events.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { createClient as createWsClient } from 'graphql-ws'
import { createClient as createSseClient } from 'graphql-sse'
import { targets } from './kit/databases.js'
import { useKit, type TestKit } from './kit/kit.js'
import { createListener } from '../src/process/http-listener.js'
import { createApiKey } from '../src/auth/api-keys.js'
import type { Scope } from '../src/auth/scopes.js'

async function listen(kit: TestKit) {
  const server: Server = createServer(createListener(kit.app, kit.deps))
  const sockets = kit.app.attachWebSocket(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const close = () => {
    sockets.close()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return { base, close }
}

interface Answer {
  data?: any
  errors?: { message: string; extensions?: { code?: string; details?: { field: string; message: string }[] } }[]
}

/** What both clients offer: the first answer of an operation (a result, or its errors), then it is ended. */
interface Door {
  first(query: string, variables?: Record<string, unknown>): Promise<Answer>
  dispose(): Promise<void> | void
}

function overWebSocket(base: string, apiKey: string): Door {
  const client = createWsClient({
    url: `${base.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${apiKey}` },
    retryAttempts: 0,
    lazy: true,
  })
  return {
    first: (query, variables = {}) =>
      new Promise((resolve, reject) => {
        let done = false
        const end = client.subscribe(
          { query, variables },
          {
            next: (result) => {
              done = true
              queueMicrotask(end)
              resolve(result as Answer)
            },
            // An `error` message carries the GraphQL errors themselves.
            error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error)),
            complete: () => done || reject(new Error('completed without an answer')),
          },
        )
      }),
    dispose: () => client.dispose(),
  }
}

function overSse(base: string, apiKey: string): Door {
  const client = createSseClient({ url: `${base}/graphql`, headers: { authorization: `Bearer ${apiKey}` }, retryAttempts: 0 })
  return {
    first: (query, variables = {}) =>
      new Promise((resolve, reject) => {
        let done = false
        const end = client.subscribe(
          { query, variables },
          {
            next: (result) => {
              done = true
              queueMicrotask(end)
              resolve(result as Answer)
            },
            error: reject,
            complete: () => done || reject(new Error('completed without an answer')),
          },
        )
      }),
    dispose: () => client.dispose(),
  }
}

const doors = [
  { name: 'WebSocket (graphql-ws)', open: overWebSocket },
  { name: 'Server-Sent Events (graphql-sse)', open: overSse },
]

const ACCOUNT = '{ account { name } }'
const CREATE_GROUP = 'mutation($name: String!) { createGroup(input: { name: $name }) { group { name } } }'
const DELIVERIES = 'subscription { webhookDeliveryUpdates { id test } }'

const forbidden = (scope: string) => ({
  message: `This API key lacks the scope "${scope}"`,
  extensions: { code: 'FORBIDDEN', details: [{ field: 'scope', message: expect.stringContaining(`needs the scope ${scope}`) }] },
})

describe.each(targets)('scopes on the WebSocket and SSE doors on $name', (target) => {
  const kit = useKit(target, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } })
  let base: string
  let close: () => Promise<void>
  beforeAll(async () => ({ base, close } = await listen(kit)))
  afterAll(() => close())

  const keyWith = async (accountId: string, scopes: Scope[]) =>
    (await createApiKey(kit.deps, accountId, { label: scopes.join(' '), scopes })).apiKey

  it.each(doors)('$name: a key without the scope gets FORBIDDEN naming it, and nothing runs', async ({ open }) => {
    const { account } = await kit.seed().account('Restricted')
    const sendOnly = open(base, await keyWith(account.id, ['sms:send']))
    const readOnly = open(base, await keyWith(account.id, ['read']))
    try {
      expect((await sendOnly.first(DELIVERIES)).errors).toEqual([expect.objectContaining(forbidden('read'))])
      expect((await sendOnly.first(ACCOUNT)).errors).toEqual([expect.objectContaining(forbidden('read'))])
      expect((await readOnly.first(CREATE_GROUP, { name: 'Refused' })).errors).toEqual([
        expect.objectContaining(forbidden('contacts:write')),
      ])
      expect(await kit.db.group.count({ where: { accountId: account.id } })).toBe(0)
    } finally {
      await sendOnly.dispose()
      await readOnly.dispose()
    }
  })

  it.each(doors)('$name: a key with the scope gets its query, its mutation and its subscription events', async ({ open }) => {
    const { account, key } = await kit.seed().account('Scoped')
    await kit.gql('mutation { setWebhook(url: "http://127.0.0.1:9/hook") { secret } }', {}, key)
    const reader = open(base, await keyWith(account.id, ['read']))
    const writer = open(base, await keyWith(account.id, ['contacts:write']))
    try {
      expect(await reader.first(ACCOUNT)).toEqual({ data: { account: { name: 'Scoped' } } })
      expect(await writer.first(CREATE_GROUP, { name: 'Allowed' })).toEqual({ data: { createGroup: { group: { name: 'Allowed' } } } })
      // The subscription has no acknowledgement of its start: test events are queued until one arrives.
      const event = reader.first(DELIVERIES)
      let arrived = false
      void event.finally(() => (arrived = true))
      while (!arrived) {
        await kit.gql('mutation { sendTestWebhook { id } }', {}, key)
        await Promise.race([event, new Promise((resolve) => setTimeout(resolve, 100))])
      }
      expect(await event).toEqual({ data: { webhookDeliveryUpdates: { id: expect.stringMatching(/^msg_/), test: true } } })
    } finally {
      await reader.dispose()
      await writer.dispose()
    }
  })
})
