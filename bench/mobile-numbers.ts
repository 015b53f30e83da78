// normalizeMobile on 10,000 numbers: the path as first written on libphonenumber-js alone
// (parsePhoneNumberFromString, getType(), isValid(); A) against the service's (B, the common shapes
// read by src/messaging/phone-numbers.ts with each pattern compiled once), in-process, rounds
// A B B A (MOBILE_ROUNDS of them, 5), for the shapes an add-contacts request brings: E.164, the
// national form with the default region, 00 and a mix with other regions and invalid numbers. Each
// line: the median ms for 10,000 (min to max), the ratio A / B, the load average before and after.
import { loadavg } from 'node:os'
import { normalizeMobile } from '../src/messaging/mobile.js'
import { libraryMobile } from '../test/kit/library-mobile.js'

const COUNT = 10_000
const ROUNDS = Number(process.env.MOBILE_ROUNDS ?? 5)
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')

let seed = 56
const digits = (n: number) => {
  let text = ''
  for (let i = 0; i < n; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
    text += (seed >>> 16) % 10
  }
  return text
}
const sets: [name: string, inputs: string[]][] = [
  ["E.164 (+2547…, the harness's contacts)", Array.from({ length: COUNT }, () => `+2547${digits(8)}`)],
  [
    'national (0712 345 678)',
    Array.from({ length: COUNT }, () => {
      const n = digits(8)
      return `07${n.slice(0, 2)} ${n.slice(2, 5)} ${n.slice(5)}`
    }),
  ],
  ['00 (00254712345678)', Array.from({ length: COUNT }, () => `002547${digits(8)}`)],
  [
    'mixed (KE, GB, US, NG, DE, IN, fixed lines, invalid)',
    Array.from(
      { length: COUNT },
      (_, i) =>
        [
          `+2547${digits(8)}`,
          `07${digits(8)}`,
          `+447${digits(9)}`,
          `+1 ${digits(3)} ${digits(3)} ${digits(4)}`,
          `+234 80${digits(8)}`,
          `+4915${digits(9)}`,
          `+91 9${digits(9)}`,
          `020 ${digits(7)}`,
          `+254${digits(5)}`,
          `0${digits(12)}`,
        ][i % 10]!,
    ),
  ],
]

function time(normalize: (input: string, country: string) => string | null, inputs: string[]) {
  const started = performance.now()
  for (const input of inputs) normalize(input, 'KE')
  return performance.now() - started
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!

console.log(`load average at the start: ${load()}`)
for (const [name, inputs] of sets) {
  // The same answer for every input, or the timing means nothing.
  for (const input of inputs) {
    if (normalizeMobile(input, 'KE') !== libraryMobile(input, 'KE')) {
      console.error(
        `normalizeMobile(${input}) differs from the library's: ${normalizeMobile(input, 'KE')} against ${libraryMobile(input, 'KE')}`,
      )
      process.exit(1)
    }
  }
  const a: number[] = []
  const b: number[] = []
  const before = load()
  for (let round = 0; round < ROUNDS; round++) {
    a.push(time(libraryMobile, inputs))
    b.push(time(normalizeMobile, inputs))
    b.push(time(normalizeMobile, inputs))
    a.push(time(libraryMobile, inputs))
  }
  const range = (values: number[]) =>
    `${median(values).toFixed(1)} ms (${Math.min(...values).toFixed(1)} to ${Math.max(...values).toFixed(1)})`
  console.log(
    `${name}: library ${range(a)}, service ${range(b)}, ${(median(a) / median(b)).toFixed(1)}x; accepted ${inputs.filter((i) => normalizeMobile(i, 'KE') !== null).length}; load ${before} → ${load()}`,
  )
}
