// The front-end recipes of docs/graphql.md, each from its npm package, against the real server
// (a child process) on each database: Apollo Client 4 over graphql-sse and over graphql-ws, and urql
// over graphql-ws, each with a query, a mutation and a subscription that delivers its event.
import type { ChildProcess } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { print } from 'graphql'
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, Observable, gql } from '@apollo/client'
import { GraphQLWsLink } from '@apollo/client/link/subscriptions'
import { OperationTypeNode } from 'graphql'
import { createClient as createSseClient, type Client as SseClient } from 'graphql-sse'
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws'
import { Client as UrqlClient, fetchExchange, subscriptionExchange, gql as urqlGql } from '@urql/core'
import { runCli, spawnServer } from './kit/server-process.js'
import { targets, type TestDatabase } from './kit/databases.js'

const ACCOUNT = 'query Account { account { id name } }'
const CREATE_GROUP = 'mutation CreateGroup($name: String!) { createGroup(input: { name: $name }) { group { uuid name } } }'
const NOW_PLAYING = 'subscription NowPlaying($channel: String!) { nowPlaying(channel: $channel) { channelName isLive } }'

interface Recipe {
  query(document: string): Promise<any>
  mutate(document: string, variables: Record<string, unknown>): Promise<any>
  /** The first event of a subscription; the subscription is ended after it. */
  firstEvent(document: string, variables: Record<string, unknown>): Promise<any>
  dispose(): Promise<void> | void
}

/** docs/graphql.md's Apollo Client + graphql-sse recipe, as written there. */
function apolloOverSse(base: string, apiKey: string): Recipe {
  const headers = { authorization: `Bearer ${apiKey}` }
  // retryAttempts 0: a refusal fails the test instead of being retried in silence.
  const sse: SseClient = createSseClient({ url: `${base}/graphql`, headers, retryAttempts: 0 })
  const sseLink = new ApolloLink(
    (operation) =>
      new Observable((observer) =>
        sse.subscribe(
          {
            query: print(operation.query),
            variables: operation.variables,
            operationName: operation.operationName,
            extensions: operation.extensions,
          },
          {
            next: (data) => observer.next(data as never),
            error: (error) => observer.error(error),
            complete: () => observer.complete(),
          },
        ),
      ),
  )
  const client = new ApolloClient({
    cache: new InMemoryCache(),
    link: ApolloLink.split(
      ({ operationType }) => operationType === OperationTypeNode.SUBSCRIPTION,
      sseLink,
      new HttpLink({ uri: `${base}/graphql`, headers }),
    ),
  })
  return { ...apollo(client), dispose: () => (client.stop(), sse.dispose()) }
}

/** Apollo Client 4's own graphql-ws link for subscriptions, HTTP for the rest. */
function apolloOverWs(base: string, apiKey: string): Recipe {
  const ws: WsClient = createWsClient({
    url: `${base.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${apiKey}` },
    retryAttempts: 0,
  })
  const client = new ApolloClient({
    cache: new InMemoryCache(),
    link: ApolloLink.split(
      ({ operationType }) => operationType === OperationTypeNode.SUBSCRIPTION,
      new GraphQLWsLink(ws),
      new HttpLink({ uri: `${base}/graphql`, headers: { authorization: `Bearer ${apiKey}` } }),
    ),
  })
  return { ...apollo(client), dispose: async () => (client.stop(), await ws.dispose()) }
}

function apollo(client: ApolloClient): Omit<Recipe, 'dispose'> {
  return {
    query: async (document) => (await client.query({ query: gql(document), fetchPolicy: 'no-cache' })).data,
    mutate: async (document, variables) => (await client.mutate({ mutation: gql(document), variables })).data,
    firstEvent: (document, variables) =>
      new Promise((resolve, reject) => {
        const subscription = client.subscribe({ query: gql(document), variables }).subscribe({
          next: (result) => {
            subscription.unsubscribe()
            if (result.error) reject(result.error)
            else resolve(result.data)
          },
          error: reject,
        })
      }),
  }
}

/** docs/graphql.md's urql + graphql-ws recipe, as written there. */
function urqlOverWs(base: string, apiKey: string): Recipe {
  const ws: WsClient = createWsClient({
    url: `${base.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${apiKey}` },
    retryAttempts: 0,
  })
  const client = new UrqlClient({
    url: `${base}/graphql`,
    fetchOptions: { headers: { authorization: `Bearer ${apiKey}` } },
    exchanges: [
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink as never) }),
        }),
      }),
      fetchExchange,
    ],
  })
  const settled = (result: { data?: any; error?: Error }) => {
    if (result.error) throw result.error
    return result.data
  }
  return {
    query: async (document) => settled(await client.query(urqlGql(document), {}).toPromise()),
    mutate: async (document, variables) => settled(await client.mutation(urqlGql(document), variables).toPromise()),
    firstEvent: (document, variables) =>
      new Promise((resolve, reject) => {
        // (toPromise would wait for the end of the stream.)
        const { unsubscribe } = client.subscription(urqlGql(document), variables).subscribe((result) => {
          queueMicrotask(() => unsubscribe())
          if (result.error) reject(result.error)
          else resolve(result.data)
        })
      }),
    dispose: () => ws.dispose(),
  }
}

const recipes = [
  { name: 'Apollo Client 4 + graphql-sse', make: apolloOverSse },
  { name: 'Apollo Client 4 + graphql-ws', make: apolloOverWs },
  { name: 'urql + graphql-ws', make: urqlOverWs },
]

describe.each(targets)('GraphQL clients from their npm packages on $name', (target) => {
  let database: TestDatabase
  let server: ChildProcess
  let base: string
  let apiKey: string
  let accountId: string
  let channel: string

  beforeAll(async () => {
    database = await target.create()
    const env = { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'warn' }
    const demo = JSON.parse(await runCli(env, 'demo:seed'))
    apiKey = demo.apiKey
    accountId = demo.account.uuid
    channel = demo.channel.slug
    const spawned = spawnServer({ DATABASE_URL: database.url })
    server = spawned.child
    base = await spawned.listening(60_000)
    // A probe that timed out while the machine was busy starting makes the server answer 503 until
    // the next one succeeds (src/db/breaker.ts): the clients start once it answers.
    for (let answered = false; !answered;) {
      const res = await post({ query: ACCOUNT })
      answered = res.status === 200
      if (!answered) await new Promise((r) => setTimeout(r, 200))
    }
  }, 120_000)

  afterAll(async () => {
    server?.kill('SIGTERM')
    await database?.drop()
  })

  it.each(recipes)('$name: a query, a mutation and a subscription event', async ({ name, make }) => {
    const client = make(base, apiKey)
    try {
      expect(await client.query(ACCOUNT)).toMatchObject({ account: { id: accountId } })
      expect(await client.mutate(CREATE_GROUP, { name: `By ${name}` })).toMatchObject({
        createGroup: { group: { uuid: expect.any(String), name: `By ${name}` } },
      })
      // nowPlaying sends the channel's answer at once on subscribing, then each change.
      expect(await client.firstEvent(NOW_PLAYING, { channel })).toMatchObject({
        nowPlaying: { channelName: expect.any(String), isLive: expect.any(Boolean) },
      })
    } finally {
      await client.dispose()
    }
  })

  const post = (body: unknown, accept = 'application/json') =>
    fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept },
      body: JSON.stringify(body),
    })

  it('ignores top-level names it does not define (Apollo 4 spreads operationType), over HTTP and SSE', async () => {
    const extra = { operationType: 'query', id: 'x1', documentId: null, extra: { a: 1 } }
    const res = await post({ query: ACCOUNT, operationName: 'Account', variables: {}, ...extra })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ data: { account: { id: accountId, name: expect.any(String) } } })
    const stream = await post({ query: NOW_PLAYING, variables: { channel }, operationType: 'subscription' }, 'text/event-stream')
    expect(stream.status).toBe(200)
    const reader = stream.body!.getReader()
    let text = ''
    while (!text.includes('nowPlaying')) text += new TextDecoder().decode((await reader.read()).value)
    await reader.cancel()
    expect(text).toMatch(/^event: next/m)
  })

  it('still refuses a malformed known parameter with 400, whatever else the body carries', async () => {
    for (const body of [
      { query: ACCOUNT, variables: 'not an object', operationType: 'query' },
      { query: 42, operationType: 'query' },
      { operationType: 'query' },
      { query: ACCOUNT, operationName: 7 },
    ]) {
      const res = await post(body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect((await res.json()).errors[0].extensions.code).toBe('BAD_REQUEST')
    }
  })
})
