// A real SMSC for the tests and the bench: node-smpp's server over TCP (or TLS), speaking SMPP 3.4
// to the connector. It records what it was sent and can refuse, throttle, stay silent, drop the
// connection, send receipts (before or after its answer) and send inbound texts.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import smpp, { type PDU, type Session } from 'smpp'
import { sleep } from './server-process.js'

export interface SubmitRecord {
  messageId: string
  session: Session
  pdu: PDU
  /** The text of this submit_sm (short_message after its UDH, or message_payload). */
  text: string
  /** The concatenation element of the UDH, when there is one: reference, parts, part. */
  concat?: { reference: number; parts: number; part: number }
  /** When it arrived (Date.now()), for the TPS limit's test. */
  at: number
}

export type SubmitMode =
  /** Answer with a new message id. */
  | 'accept'
  /** Never answer. */
  | 'silent'
  /** Answer with this command_status. */
  | { status: number; times?: number }
  /** Answer with a generic_nack carrying this status. */
  | { nack: number }

export interface Smsc {
  port: number
  /** The SMPP_URL of a connector binding as system_id `gateway`. */
  url: string
  /** The certificate of a TLS SMSC (PEM), to trust. */
  cert?: Buffer
  submits: SubmitRecord[]
  /** Sessions bound now. */
  bound: Session[]
  binds: number
  unbinds: number
  enquireLinks: number
  options: {
    bind: 'accept' | 'refuse'
    submit: SubmitMode
    /** Answer enquire_link (false: a dead peer that keeps the TCP connection). */
    answerEnquireLink: boolean
    /** How submit_sm_resp writes the ids it gives: 8 hex digits (the default) or decimal. */
    messageIds: 'hex' | 'decimal'
    /** Send a receipt with this stat for every accepted submit; where: 'before' or 'after' the answer. */
    autoReceipt: { stat: string; when: 'before' | 'after'; to?: 'same' | 'other' } | null
  }
  receipt(
    record: SubmitRecord | string,
    stat: string,
    opts?: { err?: string; session?: Session; tlv?: boolean; done?: string },
  ): Promise<number>
  inbound(input: {
    from: string
    to: string
    text: string
    udh?: Buffer
    dataCoding?: number
    session?: Session
    sar?: [number, number, number]
  }): Promise<number>
  /** Cuts every connection without an unbind. */
  drop(): void
  waitFor<T>(what: string, probe: () => T | undefined | false | null, ms?: number): Promise<T>
  close(): Promise<void>
}

/** A self-signed certificate for 127.0.0.1, made with openssl into a temporary directory. */
function selfSigned() {
  const dir = mkdtempSync(join(tmpdir(), 'smsc-tls-'))
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    )
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function receiptText(id: string, stat: string, err: string, done: string) {
  return `id:${id} sub:001 dlvrd:${stat === 'DELIVRD' ? '001' : '000'} submit date:${done} done date:${done} stat:${stat} err:${err} text:`
}

export async function startSmsc({ tls = false, password = 'secret' }: { tls?: boolean; password?: string } = {}): Promise<Smsc> {
  const credentials = tls ? selfSigned() : null
  let nextId = 0x1000
  const smsc: Smsc = {
    port: 0,
    url: '',
    cert: credentials?.cert,
    submits: [],
    bound: [],
    binds: 0,
    unbinds: 0,
    enquireLinks: 0,
    options: { bind: 'accept', submit: 'accept', answerEnquireLink: true, autoReceipt: null, messageIds: 'hex' },
    async receipt(record, stat, { err = stat === 'DELIVRD' ? '000' : '001', session, tlv = true, done = '2604020901' } = {}) {
      const messageId = typeof record === 'string' ? record : record.messageId
      const target = session ?? (typeof record === 'string' ? smsc.bound[0] : record.session)
      if (!target) throw new Error('no bound session to send the receipt to')
      return send(target, {
        source_addr: '254700000001',
        destination_addr: 'SENDER',
        esm_class: 0x04,
        short_message: receiptText(messageId, stat, err, done),
        ...(tlv ? { receipted_message_id: messageId, message_state: stat === 'DELIVRD' ? 2 : 5 } : {}),
      })
    },
    async inbound({ from, to, text, udh, dataCoding, session, sar }) {
      const target = session ?? smsc.bound[0]
      if (!target) throw new Error('no bound session to send the text to')
      const ucs2 = dataCoding === 8 || /[^\x20-\x7e\n\r]/.test(text)
      const body = ucs2 ? Buffer.from(text, 'utf16le').swap16() : Buffer.from(text, 'latin1')
      return send(target, {
        source_addr_ton: 1,
        source_addr_npi: 1,
        source_addr: from.replace(/^\+/, ''),
        dest_addr_ton: to.startsWith('+') ? 1 : 3,
        destination_addr: to.replace(/^\+/, ''),
        esm_class: udh ? 0x40 : 0,
        data_coding: ucs2 ? 8 : 0,
        short_message: udh ? Buffer.concat([udh, body]) : body,
        ...(sar ? { sar_msg_ref_num: sar[0], sar_total_segments: sar[1], sar_segment_seqnum: sar[2] } : {}),
      })
    },
    drop() {
      for (const session of server.sessions.slice()) session.destroy()
    },
    async waitFor(what, probe, ms = 30_000) {
      const deadline = Date.now() + ms
      for (;;) {
        const value = probe()
        if (value) return value
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
        await sleep(20)
      }
    },
    async close() {
      smsc.drop()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }

  function send(session: Session, params: Record<string, unknown>): Promise<number> {
    return new Promise((resolve, reject) => {
      const ok = session.deliver_sm(params, (answer) => resolve(answer.command_status))
      if (!ok) reject(new Error('the session is closed'))
    })
  }

  const server = smpp.createServer(credentials ? { key: credentials.key, cert: credentials.cert } : {}, (session: Session) => {
    session.on('error', () => undefined)
    session.on('close', () => {
      const i = smsc.bound.indexOf(session)
      if (i >= 0) smsc.bound.splice(i, 1)
    })
    session.on('bind_transceiver', (pdu: PDU) => {
      if (smsc.options.bind === 'refuse' || pdu.system_id !== 'gateway' || pdu.password !== password) {
        session.send(pdu.response({ command_status: smpp.errors.ESME_RBINDFAIL }))
        session.close()
        return
      }
      smsc.binds++
      smsc.bound.push(session)
      session.send(pdu.response({ system_id: 'test-smsc' }))
    })
    session.on('enquire_link', (pdu: PDU) => {
      smsc.enquireLinks++
      if (smsc.options.answerEnquireLink) session.send(pdu.response())
    })
    session.on('unbind', (pdu: PDU) => {
      smsc.unbinds++
      session.send(pdu.response())
      session.close()
    })
    session.on('submit_sm', (pdu: PDU) => {
      const mode = smsc.options.submit
      const message = pdu.short_message as { message?: string | Buffer; udh?: Buffer[] } | undefined
      const payload = pdu.message_payload as { message?: string | Buffer } | undefined
      const raw = message?.message && message.message.length ? message.message : (payload?.message ?? '')
      const text = typeof raw === 'string' ? raw : raw.toString('latin1')
      const element = message?.udh?.find((u) => u[0] === 0x00)
      const concat = element ? { reference: element[2]!, parts: element[3]!, part: element[4]! } : undefined
      const at = Date.now()
      if (mode === 'silent') {
        smsc.submits.push({ messageId: '', session, pdu, text, concat, at })
        return
      }
      if (typeof mode === 'object' && 'nack' in mode) {
        session.send(new smpp.PDU('generic_nack', { command_status: mode.nack, sequence_number: pdu.sequence_number }))
        return
      }
      if (typeof mode === 'object' && 'status' in mode) {
        if (mode.times === undefined || mode.times > 0) {
          if (mode.times !== undefined) mode.times--
          session.send(pdu.response({ command_status: mode.status }))
          return
        }
      }
      const id = nextId++
      const messageId = smsc.options.messageIds === 'decimal' ? String(id) : id.toString(16).padStart(8, '0')
      const record: SubmitRecord = { messageId, session, pdu, text, concat, at }
      smsc.submits.push(record)
      const auto = smsc.options.autoReceipt
      const other = () => smsc.bound.find((s) => s !== session) ?? session
      const receiptTo = auto?.to === 'other' ? other() : session
      if (auto?.when === 'before') {
        // The receipt is written to the socket before the answer: the connector must match it later.
        void smsc.receipt(record, auto.stat, { session: receiptTo }).catch(() => undefined)
      }
      session.send(pdu.response({ message_id: record.messageId }))
      if (auto?.when === 'after') void smsc.receipt(record, auto.stat, { session: receiptTo }).catch(() => undefined)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  smsc.port = (server.address() as AddressInfo).port
  smsc.url = `${tls ? 'smpps' : 'smpp'}://gateway:${password}@127.0.0.1:${smsc.port}`
  return smsc
}
