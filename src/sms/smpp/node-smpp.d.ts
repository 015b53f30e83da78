// The part of node-smpp 0.5.1 (the `smpp` package, which ships no types) this service uses: the
// client session of the connector and the server of the test kit's SMSC.
declare module 'smpp' {
  import type { EventEmitter } from 'node:events'
  import type { Server as NetServer, Socket } from 'node:net'
  import type { TlsOptions } from 'node:tls'

  /** A decoded short_message or message_payload: the UDH elements (when the UDHI bit is set) and the text. */
  export interface DecodedMessage {
    udh?: Buffer[]
    message: string | Buffer
  }

  /** A PDU: the header fields, then the command's parameters and TLVs by their specification names. */
  export class PDU {
    constructor(command: string, options?: Record<string, unknown>)
    command: string
    command_id: number
    command_status: number
    sequence_number: number
    isResponse(): boolean
    response(options?: Record<string, unknown>): PDU
    toBuffer(): Buffer
    // Parameters and TLVs (system_id, short_message, receipted_message_id, message_state ...).
    [field: string]: unknown
  }

  export class Session extends EventEmitter {
    constructor(options: Record<string, unknown>)
    socket: Socket
    /** False when the socket is not writable (nothing was sent). */
    send(pdu: PDU, responseCallback?: (pdu: PDU) => void, sendCallback?: (pdu: PDU) => void): boolean
    close(callback?: () => void): void
    destroy(callback?: () => void): void
    pause(): void
    resume(): void
    bind_transceiver(options: Record<string, unknown>, responseCallback?: (pdu: PDU) => void): boolean
    submit_sm(options: Record<string, unknown>, responseCallback?: (pdu: PDU) => void): boolean
    deliver_sm(options: Record<string, unknown>, responseCallback?: (pdu: PDU) => void): boolean
    enquire_link(options?: Record<string, unknown> | ((pdu: PDU) => void), responseCallback?: (pdu: PDU) => void): boolean
    unbind(options?: Record<string, unknown> | ((pdu: PDU) => void), responseCallback?: (pdu: PDU) => void): boolean
    generic_nack(options?: Record<string, unknown>): boolean
  }

  export class Server extends NetServer {
    sessions: Session[]
  }

  export function createServer(options: Partial<TlsOptions> & Record<string, unknown>, listener?: (session: Session) => void): Server
  export function createServer(listener?: (session: Session) => void): Server
  export function connect(options: Record<string, unknown>, listener?: () => void): Session

  export const errors: Record<string, number>
  export const ESME_ROK: number
  export const ESME_RBINDFAIL: number
  export const ESME_RTHROTTLED: number
  export const ESME_RMSGQFUL: number
  export const ESME_RINVDSTADR: number
  export const ESME_RX_T_APPN: number
  export const ESME_RSYSERR: number
  export const ESME_RINVCMDID: number

  const smpp: {
    PDU: typeof PDU
    Session: typeof Session
    Server: typeof Server
    createServer: typeof createServer
    connect: typeof connect
    errors: Record<string, number>
  }
  export default smpp
}
