/** Time source. Everything time-dependent takes a Clock (or a `now`) so tests can pin it. */
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

export function fixedClock(at: Date | string): Clock & { set(at: Date | string): void; advance(ms: number): void } {
  let current = new Date(at)
  return {
    now: () => new Date(current),
    set: (to) => {
      current = new Date(to)
    },
    advance: (ms) => {
      current = new Date(current.getTime() + ms)
    },
  }
}
