import { readFileSync } from 'node:fs'
import type { ConnectionOptions } from 'node:tls'
import type { Logger } from 'pino'
import type { PDU } from 'smpp'
import type { Deps } from '../../deps.js'
import type { Env } from '../../core/env.js'
import { TransientGatewayError, type OutgoingSms, type SmsGateway, type SubmitAccepted } from '../gateway.js'
import { splitPages } from '../encoding.js'
import { destinationAddress, receivedAddress, senderAddress } from './addresses.js'
import { encodeGsm7, encodeUcs2 } from './gsm7.js'
import { parseReceipt } from './receipt.js'
import { NotSentError, SmppBind, UnansweredError, type BindState } from './smpp-bind.js'
import { anyPendingReceipt, applyReceipt, matchPendingReceipts } from './smpp-receipts.js'
import { receiveSmppText, type InboundText } from './smpp-inbound.js'
import { parseSmppUrl } from './smpp-url.js'
import { Prisma } from '../../generated/sqlite/client.js'
import { statementOf, timeOf } from '../sql.js'
import { turnStatement, turnTransaction } from '../../db/turn-transaction.js'

const ESME_RMSGQFUL = 0x14
const ESME_RTHROTTLED = 0x58
const ESME_RX_T_APPN = 0x64
/** Answers that mean "not now": the part was not taken and is sent again after a pause. */
const RETRYABLE = new Set([ESME_RMSGQFUL, ESME_RTHROTTLED, ESME_RX_T_APPN])
/** In-process retries of a throttled part (50, 100, 200, 400 ms) before the outbox's own backoff. */
const THROTTLE_RETRIES = 4
/** Answers' ids looked for among the pending receipts in one statement (each with its other spellings: within SQLite's parameter limit). */
const MATCH_CHUNK = 200
const ESM_UDHI = 0x40
const ESM_RECEIPT_TYPES = new Set([0x04, 0x08, 0x10, 0x20])

/** A part's row, written right before its submit_sm. */
interface PartRow {
  messageId: string
  part: number
  parts: number
  createdAt: string
}
/** The part rows of one turn's batch (turnStatement): one INSERT. */
const insertParts = (rows: PartRow[]) => Prisma.sql`
  INSERT INTO "SmppPart" ("messageId", "part", "parts", "createdAt")
  VALUES ${Prisma.join(rows.map((r) => Prisma.sql`(${r.messageId}, ${r.part}, ${r.parts}, ${r.createdAt})`))}
  RETURNING "part"`

/** An accepted part's answer: the SMSC's id of the part. */
interface PartAnswer {
  messageId: string
  part: number
  id: string
}
/** The answers of one turn's batch (turnStatement), of any messages: one UPDATE. */
const recordAnswers = (answers: PartAnswer[]) => Prisma.sql`
  UPDATE "SmppPart" SET "smscMessageId" = CASE ${Prisma.join(
    answers.map((a) => Prisma.sql`WHEN "messageId" = ${a.messageId} AND "part" = ${a.part} THEN ${a.id}`),
    ' ',
  )} END
  WHERE ${Prisma.join(
    answers.map((a) => Prisma.sql`("messageId" = ${a.messageId} AND "part" = ${a.part})`),
    ' OR ',
  )}
  RETURNING "part"`

export interface SmppGatewayOptions {
  url: string
  systemType?: string
  window?: number
  tps?: number
  enquireLinkMs?: number
  responseTimeoutMs?: number
  longMessages?: 'udh' | 'payload'
  /** TLS options beyond the URL's host (a CA to trust). */
  tls?: ConnectionOptions
  logger: Logger
  onState?(state: BindState): void
}

/** From the settings (SMS_GATEWAY=smpp). */
export function smppOptionsFromEnv(env: Env, logger: Logger): SmppGatewayOptions {
  return {
    url: env.SMPP_URL!,
    systemType: env.SMPP_SYSTEM_TYPE,
    window: env.SMPP_WINDOW,
    tps: env.SMPP_TPS,
    enquireLinkMs: env.SMPP_ENQUIRE_LINK_MS,
    responseTimeoutMs: env.SMPP_RESPONSE_TIMEOUT_MS,
    longMessages: env.SMPP_LONG_MESSAGES,
    tls: env.SMPP_TLS_CA_FILE ? { ca: readFileSync(env.SMPP_TLS_CA_FILE) } : undefined,
    logger,
  }
}

type PartResult =
  | { part: number; kind: 'accepted'; id: string }
  | { part: number; kind: 'unsent' | 'retry' | 'refused'; status?: number }
  | { part: number; kind: 'unanswered' }

export type SmppGateway = SmsGateway & {
  /** Binds and starts taking receipts and inbound texts, reporting through `deps`. */
  start(deps: Deps): void
  /** Resolves once bound. */
  whenBound(): Promise<void>
  stop(): Promise<void>
  readonly bind: SmppBind
}

/**
 * The SMPP 3.4 connector (docs/sms.md "SMPP"): one transceiver bind per instance. Each part of a
 * message is a row (SmppPart) written before its submit_sm and given the SMSC's id from the
 * answer, so that receipts match on any instance and a part that may have gone out is never sent
 * again. Receipts and inbound texts go through the same functions as the GraphQL mutations
 * (`recordCarrierStatus`, `handleInboundSms`).
 */
export function createSmppGateway(options: SmppGatewayOptions): SmppGateway {
  const target = parseSmppUrl(options.url)
  const longMessages = options.longMessages ?? 'udh'
  let deps: Deps | null = null
  let reference = Math.floor(Math.random() * 256)
  const logger = options.logger

  const bind = new SmppBind({
    target,
    systemType: options.systemType ?? '',
    window: options.window ?? 10,
    tps: options.tps,
    enquireLinkMs: options.enquireLinkMs ?? 30_000,
    responseTimeoutMs: options.responseTimeoutMs ?? 10_000,
    tls: options.tls,
    logger,
    onState: options.onState,
    onDeliver: (pdu) => onDeliver(pdu),
  })

  /**
   * Answers taken whose ids are not recorded yet, by the SMSC's id. The SMSC may send a part's
   * receipt right behind its answer, in the same read: the receipt waits here for the recording
   * (a few milliseconds) rather than being kept as pending and matched afterwards (more statements).
   * A receipt at another instance, or one whose id is spelled otherwise, takes the pending path.
   * The promise a receipt waits on is made only when one comes (most come after the recording).
   */
  const recording = new Map<string, { done?: Promise<void>; resolve?: () => void }>()
  const awaiting = (id: string) => {
    if (!recording.has(id)) recording.set(id, {})
  }
  const whenRecorded = (id: string) => {
    const entry = recording.get(id)
    if (!entry) return undefined
    entry.done ??= new Promise<void>((resolve) => (entry.resolve = resolve))
    return entry.done
  }
  const recorded = (id: string) => {
    const entry = recording.get(id)
    if (!entry) return
    recording.delete(id)
    entry.resolve?.()
  }

  /**
   * The answers recorded in one turn, looked for among the pending receipts in one statement at the
   * next `setImmediate` (one a turn rather than one a message).
   */
  let toMatch: string[] = []
  const matchLater = (ids: string[]) => {
    if (!deps) return
    if (!toMatch.length) {
      const ready = deps
      setImmediate(() => {
        const batch = toMatch
        toMatch = []
        const failed = (error: unknown) => logger.warn({ err: error }, 'smpp receipt match failed')
        // Looked for by ids only when some receipt is pending at all (the sweep finds any missed).
        anyPendingReceipt(ready).then((pending) => {
          if (!pending) return
          for (let i = 0; i < batch.length; i += MATCH_CHUNK)
            void matchPendingReceipts(ready, batch.slice(i, i + MATCH_CHUNK)).catch(failed)
        }, failed)
      })
    }
    toMatch.push(...ids)
  }

  async function onDeliver(pdu: PDU): Promise<number> {
    if (!deps) return ESME_RX_T_APPN
    const esmClass = Number(pdu.esm_class ?? 0)
    const decoded = readText(pdu)
    if (ESM_RECEIPT_TYPES.has(esmClass & 0x3c)) {
      const receipt = parseReceipt(decoded.text, {
        receiptedMessageId: pdu.receipted_message_id,
        messageState: pdu.message_state,
      })
      if (!receipt) {
        // Acknowledged (the SMSC would send it for ever) and logged for the operator.
        logger.warn({ text: decoded.text.slice(0, 200) }, 'smpp receipt without a message id or stat ignored')
        return 0
      }
      await whenRecorded(receipt.smscMessageId)
      await applyReceipt(deps, receipt)
      return 0
    }
    const input: InboundText = {
      sim: receivedAddress(String(pdu.destination_addr ?? ''), Number(pdu.dest_addr_ton ?? 0)),
      from: receivedAddress(String(pdu.source_addr ?? ''), Number(pdu.source_addr_ton ?? 0)),
      text: decoded.text,
      concat: decoded.concat,
    }
    await receiveSmppText(deps, input)
    return 0
  }

  async function submitPart(
    message: OutgoingSms,
    texts: string[],
    part: number,
    ref: number,
    record: () => Promise<void>,
    onAnswer: (answer: PDU) => void,
  ): Promise<PartResult> {
    const text = texts[part - 1]!
    const gsm = message.encoding === 'GSM_7'
    const body = gsm ? encodeGsm7(text) : encodeUcs2(text)
    const source = senderAddress(message.sender)
    const destination = destinationAddress(message.to)
    const params: Record<string, unknown> = {
      source_addr_ton: source.ton,
      source_addr_npi: source.npi,
      source_addr: source.addr,
      dest_addr_ton: destination.ton,
      dest_addr_npi: destination.npi,
      destination_addr: destination.addr,
      registered_delivery: 1,
      data_coding: gsm ? 0 : 8,
      esm_class: 0,
    }
    if (texts.length > 1) {
      params.esm_class = ESM_UDHI
      params.short_message = Buffer.concat([Buffer.from([0x05, 0x00, 0x03, ref, texts.length, part]), body])
    } else if (message.pages > 1) {
      // SMPP_LONG_MESSAGES=payload: the whole text in one submit_sm; the SMSC splits it.
      params.short_message = Buffer.alloc(0)
      params.message_payload = body
    } else {
      params.short_message = body
    }
    let recorded = false
    const recordOnce = () =>
      record().then(() => {
        recorded = true
      })
    for (let attempt = 0; ; attempt++) {
      let answer: PDU
      try {
        // A throttled part sent again has its row already.
        answer = await bind.submit(params, recorded ? undefined : recordOnce, onAnswer)
      } catch (error) {
        if (error instanceof UnansweredError) return { part, kind: 'unanswered' }
        if (error instanceof NotSentError) return { part, kind: 'unsent' }
        throw error
      }
      const status = answer.command_status
      if (status === 0 && answer.command === 'submit_sm_resp') return { part, kind: 'accepted', id: String(answer.message_id ?? '') }
      if (!RETRYABLE.has(status)) return { part, kind: 'refused', status }
      if (attempt >= THROTTLE_RETRIES) return { part, kind: 'retry', status }
      await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt))
    }
  }

  const gateway: SmppGateway = {
    name: 'smpp',
    sandbox: false,
    bind,
    start(given) {
      deps = given
      bind.start()
    },
    whenBound: () => bind.whenBound(),
    health: () => ({ state: bind.state, bound: bind.state === 'bound' }),
    stop: () => bind.stop(),
    sweep: () => (deps ? matchPendingReceipts(deps) : Promise.resolve(0)),

    async submit(message, context): Promise<SubmitAccepted> {
      const { now } = context
      const run = (statement: Prisma.Sql) => statementOf(context, statement)
      // The part rows and the answers' ids: committed when they resolve, in one transaction with the
      // other records of this turn (turnTransaction) when the caller gives its transactions.
      const { directTransaction } = context
      const record = <T>(body: (write: (statement: Prisma.Sql) => Promise<Record<string, unknown>[]>) => Promise<T>) =>
        directTransaction ? turnTransaction(directTransaction, body) : body(run)
      const texts = longMessages === 'payload' || message.pages <= 1 ? [message.text] : splitPages(message.text)
      // A message its caller has just written has no parts yet (GatewayContext.fresh): not read.
      const existing = context.fresh
        ? []
        : (await run(Prisma.sql`SELECT "part", "smscMessageId" FROM "SmppPart" WHERE "messageId" = ${message.id} ORDER BY "part"`)).map(
            (p) => ({ part: Number(p.part), smscMessageId: p.smscMessageId as string | null }),
          )
      // A part written to the SMSC whose answer was never recorded (a crash, a timeout, a drop):
      // it may have gone out, so nothing of the message is sent again (docs/sms.md "Crashes").
      if (existing.some((p) => p.smscMessageId === null)) {
        return {
          gatewayMessageId: existing.find((p) => p.smscMessageId)?.smscMessageId ?? `unconfirmed-${message.id}`,
          finalReport: { status: 'UNKNOWN', errorCode: 'SUBMIT_UNCONFIRMED' },
        }
      }
      const missing = texts.map((_, i) => i + 1).filter((part) => !existing.some((p) => p.part === part))
      if (!missing.length) return { gatewayMessageId: existing[0]!.smscMessageId! }
      if (bind.state !== 'bound') throw new TransientGatewayError(`smpp not bound (${bind.state})`)
      reference = (reference + 1) % 256
      const ref = reference
      // Each part's row is written when the window lets it go, right before its submit_sm: a part
      // still waiting for the window when the process dies has no row and is sent after the restart.
      // Committed when it resolves (the parts the window lets go in one turn in one commit), never
      // in a transaction still open (on SQLite a transaction of its own waits for the open ones).
      const written = new Set<number>()
      const createdAt = timeOf({ kind: context.dbKind }, now)
      // Ids answered during this call, released (`recorded`) once the answers are written or have failed.
      const answered: string[] = []
      let listening = true
      const onAnswer = (answer: PDU) => {
        if (!listening || answer.command_status !== 0 || answer.command !== 'submit_sm_resp') return
        const id = String(answer.message_id ?? '')
        awaiting(id)
        answered.push(id)
      }
      let results: PartResult[]
      let accepted: Extract<PartResult, { kind: 'accepted' }>[]
      const partOf = (part: number) =>
        submitPart(
          message,
          texts,
          part,
          ref,
          () => {
            const row = { messageId: message.id, part, parts: texts.length, createdAt }
            // The rows of the parts the window lets go in one turn, of any messages, in one INSERT.
            const writing = directTransaction ? turnStatement(directTransaction, insertParts, row) : run(insertParts([row]))
            return writing.then(() => {
              written.add(part)
            })
          },
          onAnswer,
        )
      try {
        results = missing.length === 1 ? [await partOf(missing[0]!)] : await Promise.all(missing.map(partOf))

        accepted = results.filter((r): r is Extract<PartResult, { kind: 'accepted' }> => r.kind === 'accepted')
        // Parts the SMSC did not take (or that never left) are not there: a retry sends them.
        const notTaken = results
          .filter((r) => (r.kind === 'unsent' || r.kind === 'retry' || r.kind === 'refused') && written.has(r.part))
          .map((r) => r.part)
        try {
          // The usual case: the answers of the messages of one turn in one UPDATE.
          if (directTransaction && accepted.length && !notTaken.length) {
            const answer = (r: (typeof accepted)[number]) =>
              turnStatement(directTransaction, recordAnswers, { messageId: message.id, part: r.part, id: r.id })
            await (accepted.length === 1 ? answer(accepted[0]!) : Promise.all(accepted.map(answer)))
          } else if (accepted.length || notTaken.length)
            await record(async (write) => {
              // One UPDATE for the accepted parts' ids.
              if (accepted.length)
                await write(Prisma.sql`
                  UPDATE "SmppPart" SET "smscMessageId" = CASE "part" ${Prisma.join(
                    accepted.map((r) => Prisma.sql`WHEN ${r.part} THEN ${r.id}`),
                    ' ',
                  )} END
                  WHERE "messageId" = ${message.id} AND "part" IN (${Prisma.join(accepted.map((r) => r.part))})
                  RETURNING "part"`)
              if (notTaken.length)
                await write(
                  Prisma.sql`DELETE FROM "SmppPart" WHERE "messageId" = ${message.id} AND "part" IN (${Prisma.join(notTaken)}) RETURNING "part"`,
                )
            })
        } catch (error) {
          // The database failed after the PDUs left: not a refusal. The retry finds the parts without
          // ids and never sends them again (UNKNOWN); parts not taken may stay as rows (UNKNOWN too).
          throw new TransientGatewayError(`smpp answers not recorded: ${(error as Error).message}`)
        }
      } finally {
        // Receipts waiting for these answers go on (to the pending path when the recording failed).
        listening = false
        for (const id of answered) recorded(id)
      }
      // Receipts that came before these answers were recorded (maybe to another instance).
      if (accepted.length) matchLater(accepted.map((r) => r.id))

      const refused = results.find((r) => r.kind === 'refused')
      if (refused && 'status' in refused) {
        throw new Error(`smpp submit_sm refused with command_status 0x${(refused.status ?? 0).toString(16).padStart(8, '0')}`)
      }
      if (results.some((r) => r.kind === 'unanswered')) {
        return {
          gatewayMessageId: accepted.find((r) => r.kind === 'accepted')?.id ?? `unconfirmed-${message.id}`,
          finalReport: { status: 'UNKNOWN', errorCode: 'SUBMIT_UNCONFIRMED' },
        }
      }
      const retry = results.find((r) => r.kind === 'retry' || r.kind === 'unsent')
      if (retry) {
        throw new TransientGatewayError(
          retry.kind === 'retry' ? `smpp throttled (command_status 0x${(retry.status ?? 0).toString(16)})` : 'smpp bind lost',
        )
      }
      // The first part's id names the message (each part's id is in SmppPart for the receipts).
      const ids = new Map(existing.map((p) => [p.part, p.smscMessageId!]))
      for (const r of accepted) ids.set(r.part, r.id)
      return { gatewayMessageId: ids.get(1) ?? [...ids.values()][0]! }
    },
  }
  return gateway
}

/** The text of a deliver_sm (short_message, or message_payload when that is empty) and its concatenation header. */
function readText(pdu: PDU): { text: string; concat?: InboundText['concat'] } {
  const field = (value: unknown) => {
    if (!value) return null
    if (typeof value === 'string') return { message: value, udh: undefined }
    if (Buffer.isBuffer(value)) return { message: value.toString('latin1'), udh: undefined }
    const decoded = value as { message: string | Buffer; udh?: Buffer[] }
    return { message: typeof decoded.message === 'string' ? decoded.message : decoded.message.toString('latin1'), udh: decoded.udh }
  }
  const short = field(pdu.short_message)
  const decoded = short && short.message.length ? short : (field(pdu.message_payload) ?? short)
  const text = decoded?.message ?? ''
  for (const element of decoded?.udh ?? []) {
    if (element[0] === 0x00 && element.length >= 5)
      return { text, concat: { reference: element[2]!, parts: element[3]!, part: element[4]! } }
    if (element[0] === 0x08 && element.length >= 6)
      return { text, concat: { reference: element.readUInt16BE(2), parts: element[4]!, part: element[5]! } }
  }
  if (typeof pdu.sar_msg_ref_num === 'number' && typeof pdu.sar_total_segments === 'number' && typeof pdu.sar_segment_seqnum === 'number') {
    return { text, concat: { reference: pdu.sar_msg_ref_num, parts: pdu.sar_total_segments, part: pdu.sar_segment_seqnum } }
  }
  return { text }
}
