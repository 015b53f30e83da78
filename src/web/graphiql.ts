// GraphiQL bundled with the service (@graphql-yoga/render-graphiql inlines it, so no CDN is needed),
// opened on a query that shows the main types and with the Authorization header ready to fill in.
import type { GraphiQLOptions } from 'graphql-yoga'

export const GRAPHIQL_HEADERS = JSON.stringify({ Authorization: 'Bearer <your API key>' }, null, 2)

export const GRAPHIQL_DEFAULT_QUERY = `# sms-channel-gateway GraphQL API
#
# Messaging data needs an API key: put yours in place of
# <your API key> in the Headers tab below. Get one, with demo
# data and the live demo-tv channel, from
#   npm run cli -- demo:seed
# Channel data is public. REST reference: /api/docs

query Overview {
  contacts(perPage: 5) {
    nodes { id mobile firstName familyName groups { id name } }
    pageInfo { total page pageCount }
  }
  groups(perPage: 5) {
    nodes { id name description subscribable subscriberCount }
  }
}

query NowPlaying($channel: String! = "demo-tv") {
  channel(id: $channel) {
    name
    timezone
    nowPlaying { isLive estimatedEndAt currentVideo { name startTime endTime remainingTimeHuman } }
    upcomingAirings(limit: 3) { startsAt state program { name } episode { episodeNumber name } }
  }
}

# Subscriptions run from this page too (Server-Sent Events):
# the answer, then every change, until you stop it.
subscription LiveNowPlaying($channel: String! = "demo-tv") {
  nowPlaying(channel: $channel) { isLive currentVideo { name endTime } }
}
`

export const graphiqlOptions: GraphiQLOptions = {
  title: 'Gateway GraphQL',
  headers: GRAPHIQL_HEADERS,
  defaultQuery: GRAPHIQL_DEFAULT_QUERY,
  // Open the Headers tab: it is where the key goes.
  defaultEditorToolsVisibility: 'headers',
  // Keys are not kept in the browser's storage.
  shouldPersistHeaders: false,
}

let page: Promise<string> | undefined
/**
 * The page is 9 MB of inlined GraphiQL and the options never change: render it once, on the first
 * browser that asks. The bundle is imported only then, so an instance no one opens GraphiQL on
 * never holds it (about 37 MiB of heap).
 */
export const renderBundledGraphiQL = (options: GraphiQLOptions) =>
  (page ??= import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) =>
    renderGraphiQL(options).replace('</head>', `${ACCESSIBLE_GRAPHIQL}</head>`),
  ))

/**
 * Two things in GraphiQL's own markup fail an axe scan (serious): the title's grey on grey
 * (4.26:1, AA needs 4.5:1), and each operation tab, an `li role="tab"` holding its button
 * (nested-interactive). The title gets a darker grey; the tab role moves to the button, which is
 * the element that takes focus and clicks (the WAI-ARIA tabs pattern), and the `li` becomes
 * presentational. GraphiQL re-renders tabs, so an observer keeps them so.
 */
const ACCESSIBLE_GRAPHIQL = `<style>.graphiql-container .graphiql-logo, .graphiql-container .graphiql-logo span { color: #4b5567; }</style>
<script>
  new MutationObserver(() => {
    for (const li of document.querySelectorAll('li.graphiql-tab')) {
      const button = li.querySelector('button.graphiql-tab-button')
      if (!button) continue
      // GraphiQL sets aria-selected on the li again when the active tab changes.
      const selected = li.getAttribute('aria-selected')
      if (selected !== null) {
        if (button.getAttribute('aria-selected') !== selected) button.setAttribute('aria-selected', selected)
        li.removeAttribute('aria-selected')
      }
      if (button.getAttribute('role') !== 'tab') button.setAttribute('role', 'tab')
      if (li.getAttribute('role') !== 'presentation') li.setAttribute('role', 'presentation')
    }
  }).observe(document.documentElement, { subtree: true, childList: true, attributes: true, attributeFilter: ['role', 'aria-selected'] })
</script>
`
