// Sending SMS and the delivery report of the messaging API.
import { array, boolean, integer, nullable, object, oneOf, string, uuid, type JsonSchema } from './json-schema.js'

const REPORT_TIME = "In the account's timezone, shape YYYY-MM-DD hh:mm AM|PM."
const DECIMAL = { pattern: '^\\d+(\\.\\d+)?$' }
const MESSAGE = string(
  'The text; not empty. GSM-7 when possible (160 characters in one page, 153 per page when split), else UCS-2 (70 / 67). At most 10 pages.',
  { minLength: 1 },
)
const SENDER = string('Up to 11 letters and digits, or a phone number. Default: from the account name.')

export const smsSchemas: Record<string, JsonSchema> = {
  SendSmsInput: object(
    {
      mobile: { ...string('Recipient. Written without a country code it is read in DEFAULT_COUNTRY.'), type: ['string', 'integer'] },
      message: MESSAGE,
      sender: SENDER,
    },
    { optional: ['sender'] },
  ),
  SendSmsToGroupInput: object(
    { group: uuid('The group uuid: every contact in it gets the message once.'), message: MESSAGE, sender: SENDER },
    { optional: ['sender'] },
  ),
  BulkSend: object({
    reference: uuid('The bulk send; the same for a retry with the same Idempotency-Key.'),
    group: uuid('The group it went to.'),
    status: oneOf(
      ['SENT', 'SENDING', 'NOCREDT'],
      'SENT: every contact has its message. NOCREDT: the credit did not cover every contact; nobody was sent to, nothing was charged.',
    ),
    recipients: integer('How many contacts the group had.', { minimum: 1 }),
    pages: integer('Pages per message.', { minimum: 1 }),
    costPerPage: string('Exact decimal.', DECIMAL),
    creditsDeducted: string('The whole charge (pages × costPerPage × recipients), exact decimal; 0 when NOCREDT.', DECIMAL),
    messages: array(
      object({
        reference: uuid('The message: poll GET /sms/delivery-report/{reference}; webhooks carry it as `id`.'),
        mobile: string('Recipient, E.164.'),
        status: oneOf(
          ['DELIVRD', 'UNDELIV', 'EXPIRED', 'REJECTD', 'UNKNOWN', 'PENDING', 'FAILED', 'NOCREDT', 'DND', 'SENT'],
          'Its delivery status when the answer was made.',
        ),
      }),
      'One per contact, by mobile number; empty when NOCREDT.',
    ),
  }),
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
