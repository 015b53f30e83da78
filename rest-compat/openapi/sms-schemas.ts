// The delivery report of the messaging API.
import { boolean, integer, nullable, object, oneOf, string, uuid, type JsonSchema } from './json-schema.js'

const REPORT_TIME = "In the account's timezone, shape YYYY-MM-DD hh:mm AM|PM."
const DECIMAL = { pattern: '^\\d+(\\.\\d+)?$' }

export const smsSchemas: Record<string, JsonSchema> = {
  DeliveryReport: object(
    {
      reference: uuid('The id returned when the message was sent.'),
      id: uuid('Same as reference.'),
      mobile: string('Recipient, E.164.'),
      sender: string(),
      status: oneOf(
        ['DELIVRD', 'UNDELIV', 'EXPIRED', 'REJECTD', 'UNKNOWN', 'PENDING', 'FAILED', 'NOCREDT', 'DND', 'SENT'],
        'Delivery status code.',
      ),
      broadcastTime: string(REPORT_TIME, { pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} (AM|PM)$' }),
      pages: integer('Pages the message occupied.', { minimum: 1 }),
      costPerPage: string('Exact decimal.', DECIMAL),
      creditsDeducted: string('Exact decimal.', DECIMAL),
      mccmnc: string('Mobile country/network code of the operator.'),
      done: boolean('true: final status; false: still pending.'),
      doneDate: nullable(string(`${REPORT_TIME} null while pending.`, { pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} (AM|PM)$' })),
      sandbox: boolean('Sent through the sandbox gateway.'),
    },
    { optional: ['sandbox'] },
  ),
}
