import smpp, { type PDU, type Session } from 'smpp'
import { isIP } from 'node:net'
import type { ConnectionOptions } from 'node:tls'
import type { Logger } from 'pino'
import type { SmppTarget } from './smpp-url.js'

export type BindState = 'connecting' | 'bound' | 'unbound' | 'stopped'

/** The submit_sm never left this process: it may be sent again. */
export class NotSentError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'NotSentError'
  }
}

/** The submit_sm was written to the SMSC but no answer came (timeout, connection lost): it may have gone out. */
export class UnansweredError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UnansweredError'
  }
}

export interface SmppBindOptions {
  target: SmppTarget
  systemType: string
  /** submit_sm in flight at once. */
  window: number
  /** submit_sm a second; undefined: no limit. */
  tps?: number
  enquireLinkMs: number
  responseTimeoutMs: number
  tls?: ConnectionOptions
  logger: Logger
  /** An inbound deliver_sm (receipt or text): resolves to its deliver_sm_resp command_status. */
  onDeliver(pdu: PDU): Promise<number>
  /** Called on every change of state (metrics, tests). */
  onState?(state: BindState): void
}

const BACKOFF_FIRST_MS = 250
const BACKOFF_MAX_MS = 30_000

interface Waiter {
  resolve(): void
  reject(error: Error): void
}

/**
 * One transceiver bind that stays bound: binds, answers and sends enquire_link, treats a peer silent
 * for two enquire_link periods as dead, and binds again after a drop or a refused bind with
 * exponential backoff (250 ms doubling, at most 30 s). `submit` respects the window and the TPS
 * limit and tells apart a PDU that never left (NotSentError) from one left without an answer
 * (UnansweredError), which the gateway must never send again.
 */
export class SmppBind {
  state: BindState = 'unbound'
  /** Binds made since start (for metrics). */
  binds = 0
  private session: Session | null = null
  private failures = 0
  private reconnectTimer: NodeJS.Timeout | null = null
  private linkTimer: NodeJS.Timeout | null = null
  private lastHeard = 0
  private linkOutstanding = false
  private inFlight = 0
  private readonly windowWaiters: Waiter[] = []
  /**
   * The submit_sm in flight, by sequence number, each with the time its answer is due
   * (performance.now()). Every one has the same timeout, so the map's order (insertion) is the
   * order of their deadlines: one timer, set for the first, rejects those due and is set again for
   * the next (`expire`), where a timer of its own for every submit_sm was set and cleared.
   */
  private readonly outstanding = new Map<number, { reject(error: Error): void; due: number }>()
  private expiryTimer: NodeJS.Timeout | null = null
  /** When the TPS limit lets the next submit_sm go (Date.now() time). */
  private nextSubmitAt = 0
  private readonly boundWaiters = new Set<() => void>()

  constructor(private readonly options: SmppBindOptions) {}

  start() {
    if (this.state === 'stopped') return
    this.connect()
  }

  /** Resolves once bound (tests, the bench); never rejects. */
  whenBound(): Promise<void> {
    if (this.state === 'bound') return Promise.resolve()
    return new Promise((resolve) => this.boundWaiters.add(resolve))
  }

  private setState(state: BindState) {
    if (this.state === state) return
    this.state = state
    this.options.onState?.(state)
    if (state === 'bound') {
      for (const resolve of this.boundWaiters) resolve()
      this.boundWaiters.clear()
    }
  }

  private connect() {
    const { target, logger } = this.options
    this.setState('connecting')
    const session = smpp.connect({
      host: target.host,
      port: target.port,
      tls: target.tls,
      // SNI names a host, never an address (RFC 6066); the certificate is checked against either.
      ...(target.tls ? { ...(isIP(target.host) ? {} : { servername: target.host }), ...this.options.tls } : {}),
    })
    this.session = session
    const onOpen = () => {
      session.bind_transceiver(
        {
          system_id: target.systemId,
          password: target.password,
          system_type: this.options.systemType,
          interface_version: 0x34,
        },
        (pdu) => {
          if (this.session !== session) return
          if (pdu.command_status !== 0) {
            logger.warn({ status: pdu.command_status, host: target.host, port: target.port }, 'smpp bind refused')
            session.destroy()
            return
          }
          this.failures = 0
          this.binds++
          this.lastHeard = Date.now()
          this.linkOutstanding = false
          this.setState('bound')
          logger.info({ host: target.host, port: target.port, systemId: target.systemId }, 'smpp bound')
          this.startLinkCheck()
        },
      )
    }
    session.on(target.tls ? 'secureConnect' : 'connect', onOpen)
    session.on('pdu', (pdu: PDU) => {
      this.lastHeard = Date.now()
      if (pdu.command === 'enquire_link_resp') this.linkOutstanding = false
    })
    session.on('enquire_link', (pdu: PDU) => session.send(pdu.response()))
    session.on('unbind', (pdu: PDU) => {
      session.send(pdu.response())
      logger.warn({ host: target.host }, 'smpp peer unbound')
      session.close()
    })
    session.on('deliver_sm', (pdu: PDU) => {
      this.options
        .onDeliver(pdu)
        .catch((error: unknown) => {
          logger.error({ err: error }, 'smpp deliver_sm failed; the SMSC will deliver it again')
          return smpp.errors.ESME_RX_T_APPN!
        })
        .then((status) => {
          if (this.session === session) session.send(pdu.response({ command_status: status }))
        })
    })
    // A request this client does not know (or one the SMSC sends without a handler): generic_nack.
    session.on('unknown', (pdu: PDU) => session.send(pdu.response()))
    session.on('error', (error: Error) => logger.warn({ err: error, host: target.host, port: target.port }, 'smpp connection error'))
    session.on('close', () => {
      if (this.session !== session) return
      this.session = null
      this.stopLinkCheck()
      this.failOutstanding(new UnansweredError('smpp connection lost before the answer'))
      this.failWaiters(new NotSentError('smpp bind lost'))
      if (this.state === 'stopped') return
      this.setState('unbound')
      const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** this.failures++)
      logger.warn({ host: target.host, port: target.port, retryInMs: delay }, 'smpp not bound; binding again')
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = null
        if (this.state !== 'stopped') this.connect()
      }, delay)
      this.reconnectTimer.unref()
    })
  }

  /** Checks every quarter period: enquire_link after a quiet period, and a peer quiet for two is dead. */
  private startLinkCheck() {
    const period = this.options.enquireLinkMs
    this.linkTimer = setInterval(
      () => {
        const session = this.session
        if (!session || this.state !== 'bound') return
        const quiet = Date.now() - this.lastHeard
        if (quiet >= 2 * period) {
          this.options.logger.warn({ quietMs: quiet }, 'smpp peer silent for two enquire_link periods; reconnecting')
          session.destroy()
          return
        }
        if (quiet >= period && !this.linkOutstanding) {
          this.linkOutstanding = true
          session.enquire_link()
        }
      },
      Math.max(25, Math.floor(period / 4)),
    )
    this.linkTimer.unref()
  }

  private stopLinkCheck() {
    if (this.linkTimer) clearInterval(this.linkTimer)
    this.linkTimer = null
  }

  private failOutstanding(error: Error) {
    if (this.expiryTimer) clearTimeout(this.expiryTimer)
    this.expiryTimer = null
    const entries = [...this.outstanding.values()]
    this.outstanding.clear()
    for (const entry of entries) entry.reject(error)
  }

  /** Rejects the submit_sm whose answer is overdue and sets the timer again for the next one due. */
  private readonly expire = () => {
    this.expiryTimer = null
    const now = performance.now()
    for (const [sequence, entry] of this.outstanding) {
      if (entry.due > now) {
        this.armExpiry(entry.due - now)
        return
      }
      this.outstanding.delete(sequence)
      entry.reject(new UnansweredError(`no submit_sm_resp within ${this.options.responseTimeoutMs} ms`))
    }
  }

  private armExpiry(delayMs: number) {
    // A timer may fire a fraction of a millisecond early (the event loop's clock counts whole ones): `expire` sets it again.
    this.expiryTimer = setTimeout(this.expire, Math.max(1, Math.ceil(delayMs)))
    this.expiryTimer.unref()
  }

  private failWaiters(error: Error) {
    for (const waiter of this.windowWaiters.splice(0)) waiter.reject(error)
  }

  private release() {
    const next = this.windowWaiters.shift()
    if (next) next.resolve()
    else this.inFlight--
  }

  /**
   * The TPS limit: one submit_sm every 1/SMPP_TPS of a second, counted from the last one that went
   * (as Jasmin's `submit_sm_throughput` paces them). A bucket holding a second's worth would let
   * 2 × TPS go within one second (the full bucket, then its refill); paced, any one second holds at
   * most TPS, and TPS + 1 at the SMSC when network or event-loop delays bunch two arrivals.
   * Takes the token and answers 0 when one is there now, else how long to wait for the next.
   */
  private takeToken(): number {
    const tps = this.options.tps
    if (!tps) return 0
    const now = Date.now()
    if (now >= this.nextSubmitAt) {
      this.nextSubmitAt = now + 1000 / tps
      return 0
    }
    return Math.ceil(this.nextSubmitAt - now)
  }

  /** Waits for a TPS token (`takeToken` had none); fails when the bind goes meanwhile. */
  private async token(waitMs: number) {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, waitMs))
      if (this.state !== 'bound') throw new NotSentError('smpp bind lost')
      waitMs = this.takeToken()
      if (!waitMs) return
    }
  }

  /**
   * Sends one submit_sm and resolves with its answer (any command_status, generic_nack included).
   * `beforeSend` runs once the window and the TPS limit let the PDU go, right before it is written
   * (the gateway records there that the part may go out); when it throws, nothing is sent.
   * `onAnswer` sees the answer as it is read, before any other PDU of the same read is handled
   * (a receipt the SMSC sent right behind it).
   * A window slot and a TPS token that are there now are taken at once, without waiting a turn.
   */
  async submit(params: Record<string, unknown>, beforeSend?: () => Promise<void>, onAnswer?: (answer: PDU) => void): Promise<PDU> {
    if (this.state !== 'bound') throw new NotSentError('smpp not bound')
    // A slot: free now, or handed over by `release` (in the order asked); fails when the bind goes.
    if (this.inFlight < this.options.window) this.inFlight++
    else await new Promise<void>((resolve, reject) => this.windowWaiters.push({ resolve, reject }))
    try {
      const waitMs = this.takeToken()
      if (waitMs) await this.token(waitMs)
      if (beforeSend) {
        if (this.state !== 'bound') throw new NotSentError('smpp bind lost')
        try {
          await beforeSend()
        } catch (error) {
          throw new NotSentError(`not sent: ${(error as Error).message}`)
        }
      }
      const session = this.session
      if (!session || this.state !== 'bound') throw new NotSentError('smpp bind lost')
      return await new Promise<PDU>((resolve, reject) => {
        const pdu = new smpp.PDU('submit_sm', params)
        const sent = session.send(pdu, (answer) => {
          // Already rejected (overdue, or the connection went): too late.
          if (!this.outstanding.delete(pdu.sequence_number)) return
          onAnswer?.(answer)
          resolve(answer)
        })
        if (!sent) {
          reject(new NotSentError('smpp connection not writable'))
          return
        }
        const timeoutMs = this.options.responseTimeoutMs
        this.outstanding.set(pdu.sequence_number, { reject, due: performance.now() + timeoutMs })
        if (!this.expiryTimer) this.armExpiry(timeoutMs)
      })
    } finally {
      this.release()
    }
  }

  /** Unbinds cleanly (waits up to a second for unbind_resp) and stops binding again. */
  async stop() {
    const session = this.session
    const wasBound = this.state === 'bound'
    this.setState('stopped')
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer)
    this.stopLinkCheck()
    this.failWaiters(new NotSentError('smpp stopping'))
    if (!session) return
    if (wasBound) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000)
        timer.unref()
        const sent = session.unbind(() => {
          clearTimeout(timer)
          resolve()
        })
        if (!sent) resolve()
      })
    }
    await new Promise<void>((resolve) => {
      if (session.socket.destroyed) return resolve()
      session.close(() => resolve())
      setTimeout(() => {
        session.destroy()
        resolve()
      }, 1000).unref()
    })
    this.session = null
    this.failOutstanding(new UnansweredError('smpp stopped before the answer'))
  }
}
