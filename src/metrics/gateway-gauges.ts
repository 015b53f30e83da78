import { Gauge } from 'prom-client'
import type { Deps } from '../deps.js'
import type { Metrics } from './create-metrics.js'

/**
 * The SMS gateway's connection as this instance sees it: `gateway_sms_bound` is 1 while it can take
 * messages (an SMPP bind is up; the sandbox always), and `gateway_sms_connection` names the state.
 */
export function registerGatewayGauges(metrics: Metrics, deps: Pick<Deps, 'gateway'>) {
  const health = () => deps.gateway.health?.() ?? { state: 'bound', bound: true }
  // prom-client registers a metric when it is made; these are read through their collect().
  // oxlint-disable-next-line no-new
  new Gauge({
    name: 'gateway_sms_bound',
    help: 'Whether the SMS gateway of this instance can take messages now (1) or not (0), by gateway',
    labelNames: ['gateway'] as const,
    registers: [metrics.registry],
    collect() {
      this.set({ gateway: deps.gateway.name }, health().bound ? 1 : 0)
    },
  })
  // oxlint-disable-next-line no-new
  new Gauge({
    name: 'gateway_sms_connection',
    help: 'The state of the SMS gateway connection of this instance (connecting, bound, unbound, stopped): 1 for the current one',
    labelNames: ['gateway', 'state'] as const,
    registers: [metrics.registry],
    collect() {
      this.reset()
      this.set({ gateway: deps.gateway.name, state: health().state }, 1)
    },
  })
}
