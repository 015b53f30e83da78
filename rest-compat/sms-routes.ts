// The delivery report path of the messaging interface.
import type { RestRoute } from './route.js'

export const smsRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/sms/delivery-report/:reference',
    api: 'messaging',
    document: `query DeliveryReport($id: ID!) {
      message(id: $id) { id to sender status broadcastTime pages costPerPage creditsDeducted mccmnc done doneDate sandbox }
    }`,
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
  },
]
