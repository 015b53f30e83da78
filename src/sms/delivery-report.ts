import { formatCredits } from './money.js'
import { reportTime } from './report-time.js'

export interface ReportSource {
  id: string
  mobile: string
  sender: string
  status: string
  broadcastAt: Date
  pages: number
  costPerPage: bigint
  creditsDeducted: bigint
  mccmnc: string
  done: boolean
  doneAt: Date | null
  sandbox: boolean
}

/** The documented delivery report object: the polling answer and every webhook body. */
export function deliveryReport(m: ReportSource, timeZone: string) {
  return {
    reference: m.id,
    id: m.id,
    mobile: m.mobile,
    sender: m.sender,
    status: m.status,
    broadcastTime: reportTime(m.broadcastAt, timeZone),
    pages: m.pages,
    costPerPage: formatCredits(m.costPerPage),
    creditsDeducted: formatCredits(m.creditsDeducted),
    mccmnc: m.mccmnc,
    done: m.done,
    doneDate: m.doneAt ? reportTime(m.doneAt, timeZone) : null,
    sandbox: m.sandbox,
  }
}
