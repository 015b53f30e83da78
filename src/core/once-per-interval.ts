/**
 * A gate for periodic work that a frequent caller (the worker's tick, every second) asks for:
 * `due(key, now)` is true the first time for a key (a database handle), then again once
 * `minIntervalMs` has passed since the last true. A clock set back makes it due at once.
 */
export function oncePerInterval() {
  const last = new WeakMap<object, number>()
  return (key: object, now: number, minIntervalMs: number): boolean => {
    const previous = last.get(key)
    if (previous !== undefined && now >= previous && now - previous < minIntervalMs) return false
    last.set(key, now)
    return true
  }
}
