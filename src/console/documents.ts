// Every GraphQL document the account console sends, in one place: console/app.tsx imports them,
// and the server counts them among the trusted documents (GRAPHQL_TRUSTED_DOCUMENTS=only lets the
// console work by construction: src/graphql/plugins/persisted-documents.ts).
const DELIVERY_FIELDS =
  'id state test messageId attempts nextAttemptAt lastError createdAt body endpoint { id url } ' +
  'attemptLog { attempt statusCode durationMs error at responseHeaders responseBody responseTruncated }'

export const CONSOLE_DOCUMENTS = {
  account: '{ account { name timezone creditBalance pricePerPage } }',
  groups: '{ groups(perPage: 100) { nodes { uuid name subscribable optinCode optoutCode subscriptionSim } } }',
  report: 'query Report($id: ID!) { message(id: $id) { uuid to status done broadcastTime doneDate pages creditsDeducted sandbox } }',
  apiKeys: '{ apiKeys { id prefix label scopes createdAt lastUsedAt revokedAt expiresAt } }',
  createApiKey:
    'mutation Create($label: String!, $scopes: [ApiKeyScope!], $expiresAt: DateTime) { createApiKey(label: $label, scopes: $scopes, expiresAt: $expiresAt) { key } }',
  rollApiKey: 'mutation Roll($id: ID!, $graceHours: Int!) { rollApiKey(id: $id, graceHours: $graceHours) { key } }',
  auditEvents:
    'query Audit($after: String) { auditEvents(first: 25, after: $after) { totalCount edges { node { id at actorKind actorLabel action target details address } } pageInfo { hasNextPage endCursor } } }',
  revokeApiKey: 'mutation Revoke($id: ID!) { revokeApiKey(id: $id) { id } }',
  webhook: '{ webhook { url secret enabled disabledReason previousSecretExpiresAt } }',
  deliveries: `query Log($state: WebhookDeliveryState, $endpointId: ID) { webhookDeliveries(state: $state, filter: { endpointId: $endpointId }, first: 50) { ${DELIVERY_FIELDS} } }`,
  deliveryUpdates: `subscription { webhookDeliveryUpdates { ${DELIVERY_FIELDS} } }`,
  setWebhook: 'mutation Set($url: String!) { setWebhook(url: $url) { secret } }',
  removeWebhook: 'mutation { removeWebhook { deletedId } }',
  rotateSecret: 'mutation Rotate($overlapHours: Int) { rotateWebhookSecret(overlapHours: $overlapHours) { secret } }',
  sendTest: 'mutation { sendTestWebhook { id } }',
  replay: 'mutation Replay($id: ID!) { redeliverWebhook(id: $id) { id } }',
  endpoints: '{ webhookEndpoints { id url eventTypes payloadFormat enabled disabledReason } }',
  createEndpoint: 'mutation AddEndpoint($input: WebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret webhook { id } } }',
  updateEndpoint:
    'mutation UpdateEndpoint($id: ID!, $input: UpdateWebhookEndpointInput!) { updateWebhookEndpoint(id: $id, input: $input) { id } }',
  sendTestTo: 'mutation TestEndpoint($endpointId: ID) { sendTestWebhook(endpointId: $endpointId) { id } }',
  deleteEndpoint: 'mutation DeleteEndpoint($id: ID!) { deleteWebhookEndpoint(id: $id) { deletedId } }',
  recover: 'mutation Recover($since: DateTime!) { recoverFailedWebhookDeliveries(since: $since) { recovered more } }',
  signOut: 'mutation Out($everywhere: Boolean) { signOut(everywhere: $everywhere) { sessionsEnded } }',
} as const
