// The delivery report path of the messaging interface.
import { route, type RestRoute } from './route.js'
import { graphql } from '../src/graphql/typed-documents.js'
import { ref, uuid } from './openapi/json-schema.js'

export const smsRoutes: RestRoute[] = [
  route({
    method: 'GET',
    path: '/sms/delivery-report/:reference',
    api: 'messaging',
    document: graphql(`query DeliveryReport($id: ID!) {
      message(id: $id) { id: uuid to sender status broadcastTime pages costPerPage creditsDeducted mccmnc done doneDate sandbox }
    }`),
    variables: ({ params }) => ({ id: params.reference }),
    toLegacy: ({ message: m }) => ({
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
    }),
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
        example: {
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
        },
      },
    },
  }),
]
