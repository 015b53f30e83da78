/** 100 ms doubling to 5 s, with up to 20 % jitter so instances do not reconnect in lockstep. */
export function reconnectDelayMs(failures: number, random: () => number = Math.random): number {
  const base = Math.min(5000, 100 * 2 ** Math.min(failures, 10))
  return Math.round(base * (1 + 0.2 * random()))
}
