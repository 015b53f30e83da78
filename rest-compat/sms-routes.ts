// The SMS paths of the messaging interface: sending (to a number, to a group) and the delivery report.
import { route, type RestRoute } from './route.js'
import { graphql, type ResultOf } from '../src/graphql/typed-documents.js'
import { ref, uuid } from './openapi/json-schema.js'
import { expectObject, readFields, type BodySpec } from './body-rules.js'

const REPORT = graphql(
  `fragment LegacyReport on SentMessage { id: uuid to sender status broadcastTime pages costPerPage creditsDeducted mccmnc done doneDate sandbox }`,
)

const legacyReport = (m: ResultOf<typeof REPORT>) => ({
  reference: m.id,
  id: m.id,
  mobile: m.to,
  sender: m.sender,
  status: m.status,
  broadcastTime: m.broadcastTime,
  pages: m.pages,
  costPerPage: m.costPerPage,
  creditsDeducted: m.creditsDeducted,
  mccmnc: m.mccmnc,
  done: m.done,
  doneDate: m.doneDate,
  sandbox: m.sandbox,
})

const sendBody: BodySpec = {
  mobile: { to: 'to', type: 'phone', required: true },
  message: { to: 'message', type: 'string', required: true },
  sender: { to: 'sender', type: 'string' },
}
const groupSendBody: BodySpec = {
  group: { to: 'groupId', type: 'string', required: true },
  message: { to: 'message', type: 'string', required: true },
  sender: { to: 'sender', type: 'string' },
}
/** The domain's field names in validation details, in the body's spelling. */
const LEGACY_FIELD: Record<string, string> = { to: 'mobile', groupId: 'group' }
const legacyField = (field: string) => LEGACY_FIELD[field] ?? field

const REPORT_EXAMPLE = {
  reference: '5d8e2f0a-7b3c-4e19-a6d4-2c1f9b0e7a55',
  id: '5d8e2f0a-7b3c-4e19-a6d4-2c1f9b0e7a55',
  mobile: '+254712345678',
  sender: 'ACME',
  status: 'DELIVRD',
  broadcastTime: '2026-03-03 09:15 AM',
  pages: 1,
  costPerPage: '0.8',
  creditsDeducted: '0.8',
  mccmnc: '63902',
  done: true,
  doneDate: '2026-03-03 09:15 AM',
  sandbox: true,
}

export const smsRoutes: RestRoute[] = [
  route({
    method: 'POST',
    path: '/sms/send',
    api: 'messaging',
    body: true,
    document: graphql(`mutation SendSms($input: SendSmsInput!) { sendSms(input: $input) { ...LegacyReport } }`, [REPORT]),
    variables: ({ body }) => ({ input: readFields(expectObject(body), sendBody) }),
    toLegacy: ({ sendSms }) => legacyReport(sendSms),
    legacyField,
    openapi: {
      operationId: 'sendSms',
      tag: 'Sending',
      summary: 'Send an SMS',
      description:
        "Charges and sends one SMS; the answer is its delivery report (`id` is the reference). Usually `SENT` (the sandbox and a carrier that accepted it), `FAILED` (refused by the gateway, refunded), `PENDING` while a gateway outage is retried, or `NOCREDT` (not sent, nothing charged: the account's credit is short). With `Idempotency-Key`, a retry (also after a crash) answers the same message and charges nothing more.",
      params: {},
      requestBody: { schema: ref('SendSmsInput'), example: { mobile: '+254712345678', message: 'Your order has shipped', sender: 'ACME' } },
      response: {
        description: 'The delivery report of the message.',
        schema: ref('DeliveryReport'),
        example: { ...REPORT_EXAMPLE, status: 'SENT', done: false, doneDate: null },
      },
    },
  }),
  route({
    method: 'POST',
    path: '/sms/send-to-group',
    api: 'messaging',
    body: true,
    document: graphql(`mutation SendSmsToGroup($input: SendSmsToGroupInput!) {
      sendSmsToGroup(input: $input) {
        uuid groupUuid status recipientCount pages costPerPage creditsDeducted
        recipients { mobile message { id: uuid status } }
      }
    }`),
    variables: ({ body }) => ({ input: readFields(expectObject(body), groupSendBody) }),
    toLegacy: ({ sendSmsToGroup: b }) => ({
      reference: b.uuid,
      group: b.groupUuid,
      status: b.status,
      recipients: b.recipientCount,
      pages: b.pages,
      costPerPage: b.costPerPage,
      creditsDeducted: b.creditsDeducted,
      messages: b.recipients.flatMap((r) => (r.message ? [{ reference: r.message.id, mobile: r.mobile, status: r.message.status }] : [])),
    }),
    legacyField,
    openapi: {
      operationId: 'sendSmsToGroup',
      tag: 'Sending',
      summary: 'Send an SMS to every contact of a group',
      description:
        'One message per contact of the group (its own delivery report and webhooks), charged at once and all or nothing: when the credit does not cover every contact, nobody is sent to, nothing is charged and `status` is `NOCREDT`. A group without contacts is a 422; an unknown group a 404. With `Idempotency-Key`, a retry answers the same bulk send, and after a crash half-way it sends to the contacts not reached yet, never twice to one; without a key the service resumes an interrupted bulk send by itself.',
      params: {},
      requestBody: {
        schema: ref('SendSmsToGroupInput'),
        example: { group: '3f0c6a4e-8d2b-4c1a-9e57-0b6d2f4a8c11', message: 'Doors open at 6pm', sender: 'ACME' },
      },
      response: {
        description: 'The bulk send and one message per contact.',
        schema: ref('BulkSend'),
        example: {
          reference: '0c7d1e2f-3a4b-4c5d-8e9f-a0b1c2d3e4f5',
          group: '3f0c6a4e-8d2b-4c1a-9e57-0b6d2f4a8c11',
          status: 'SENT',
          recipients: 2,
          pages: 1,
          costPerPage: '0.8000',
          creditsDeducted: '1.6000',
          messages: [
            { reference: '5d8e2f0a-7b3c-4e19-a6d4-2c1f9b0e7a55', mobile: '+254712345678', status: 'SENT' },
            { reference: '9a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d', mobile: '+254722000111', status: 'SENT' },
          ],
        },
      },
    },
  }),
  route({
    method: 'GET',
    path: '/sms/delivery-report/:reference',
    api: 'messaging',
    document: graphql(`query DeliveryReport($id: ID!) { message(id: $id) { ...LegacyReport } }`, [REPORT]),
    variables: ({ params }) => ({ id: params.reference }),
    toLegacy: ({ message }) => legacyReport(message),
    openapi: {
      operationId: 'getDeliveryReport',
      tag: 'Delivery reports',
      summary: 'Fetch a delivery report',
      description: "Poll until `done` is true; the same JSON is pushed to the account's webhook on every status change.",
      params: {
        reference: {
          description: 'The `id` returned when the message was sent.',
          schema: uuid(),
          example: '5d8e2f0a-7b3c-4e19-a6d4-2c1f9b0e7a55',
        },
      },
      response: {
        description: 'The delivery report.',
        schema: ref('DeliveryReport'),
        example: REPORT_EXAMPLE,
      },
    },
  }),
]
