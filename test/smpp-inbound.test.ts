import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit } from './kit/kit.js'
import { startSmsc, type Smsc } from './kit/smsc.js'
import { sleep } from './kit/server-process.js'
import { createSmppGateway, type SmppGateway } from '../src/sms/smpp/smpp-gateway.js'
import { createLogger } from '../src/core/logger.js'
import { createGroup } from '../src/messaging/groups.js'
import { assignSim } from '../src/sms/sims.js'

const run = promisify(execFile)

async function cli(url: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      env: { ...process.env, DATABASE_URL: url },
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

describe.each(targets)('SMPP inbound texts and SIMs on $name', (target) => {
  let smsc: Smsc
  let gateway: SmppGateway
  beforeAll(async () => {
    smsc = await startSmsc()
    gateway = createSmppGateway({ url: smsc.url, logger: createLogger('silent'), enquireLinkMs: 60_000 })
  })
  const kit = useKit(target, {
    env: { SMS_GATEWAY: 'smpp', SMPP_URL: 'smpp://x:y@127.0.0.1:1' },
    get gateway() {
      return gateway
    },
  })
  beforeAll(async () => {
    gateway.start(kit.deps)
    await gateway.whenBound()
  })
  afterAll(async () => {
    await gateway.stop()
    await smsc.close()
  })

  const SIM = '+254733000001'
  let accountId: string
  let groupId: string
  beforeAll(async () => {
    const s = await kit.seed().account()
    accountId = s.account.id
    await kit.db.account.update({ where: { id: accountId }, data: { creditBalance: 1_000_000n, pricePerPage: 10_000n } })
    await assignSim(kit.deps, { accountId, number: SIM })
    const { group } = await createGroup(kit.deps, accountId, {
      name: 'Weather',
      subscribable: true,
      subscriptionSim: SIM,
      optinCode: 'JOIN',
      optoutCode: 'STOP',
      subscriptionAutoresponse: 'Welcome to Weather',
      unsubscribeAutoresponse: 'Bye',
    })
    groupId = group.id
  })

  const member = (mobile: string) => kit.db.membership.findFirst({ where: { groupId, contact: { mobile } } })

  it('runs an opt-in code sent to an assigned SIM through receiveSms, and answers through SMPP from the SIM', async () => {
    const before = smsc.submits.length
    expect(await smsc.inbound({ from: '+254711200001', to: SIM, text: ' join ' })).toBe(0)
    expect(await member('+254711200001')).toMatchObject({ selfSubscribed: true })
    const reply = await smsc.waitFor('the autoresponse', () => smsc.submits[before])
    expect(reply.text).toBe('Welcome to Weather')
    expect(reply.pdu).toMatchObject({ source_addr: '254733000001', source_addr_ton: 1, destination_addr: '254711200001' })
    expect(await kit.db.inboundSms.findFirst({ where: { sender: '+254711200001' } })).toMatchObject({
      accountId,
      sim: SIM,
      text: ' join ',
      outcome: 'SUBSCRIBED',
    })
    expect(await smsc.inbound({ from: '+254711200001', to: SIM, text: 'STOP' })).toBe(0)
    expect(await member('+254711200001')).toBeNull()
  })

  it('joins a concatenated text (UDH, parts out of order) before running it', async () => {
    const udh = (part: number) => Buffer.from([0x05, 0x00, 0x03, 0x2a, 2, part])
    expect(await smsc.inbound({ from: '+254711200002', to: SIM, text: 'IN', udh: udh(2) })).toBe(0)
    expect(await member('+254711200002')).toBeNull()
    expect(await smsc.inbound({ from: '+254711200002', to: SIM, text: 'JO', udh: udh(1) })).toBe(0)
    expect(await member('+254711200002')).toMatchObject({ selfSubscribed: true })
    expect(await kit.db.inboundSmsPart.count()).toBe(0)
  })

  it('joins a concatenated text sent with sar_* TLVs', async () => {
    await smsc.inbound({ from: '+254711200003', to: SIM, text: 'jo', sar: [7, 2, 1] })
    await smsc.inbound({ from: '+254711200003', to: SIM, text: 'in', sar: [7, 2, 2] })
    expect(await member('+254711200003')).toMatchObject({ selfSubscribed: true })
  })

  it('acknowledges a text to a SIM nobody owns and keeps it for the operator (sim:inbox)', async () => {
    expect(await smsc.inbound({ from: '+254711200004', to: '+254733999999', text: 'hello?' })).toBe(0)
    const kept = await until('kept', () => kit.db.inboundSms.findFirst({ where: { sim: '+254733999999' } }))
    expect(kept).toMatchObject({ accountId: null, outcome: 'UNOWNED', text: 'hello?', sender: '+254711200004' })
    const inbox = await cli(kit.url, 'sim:inbox')
    expect(inbox.code).toBe(0)
    expect(JSON.parse(inbox.stdout).texts).toEqual([
      { sim: '+254733999999', from: '+254711200004', text: 'hello?', outcome: 'UNOWNED', account: null, receivedAt: expect.any(String) },
    ])
    const bad = await cli(kit.url, 'sim:inbox', '--outcome', 'LOST')
    expect(bad).toMatchObject({ code: 1, stdout: '' })
    expect(bad.stderr.trim().split('\n')).toEqual(['sim:inbox: --outcome must be UNOWNED, SUBSCRIBED, UNSUBSCRIBED, IGNORED or all'])
  }, 120_000)

  it('keeps an owned text that is no code as IGNORED', async () => {
    await smsc.inbound({ from: '+254711200005', to: SIM, text: 'what is this' })
    expect(await kit.db.inboundSms.findFirst({ where: { sender: '+254711200005' } })).toMatchObject({ outcome: 'IGNORED', accountId })
  })

  it('assigns, lists and unassigns SIMs from the CLI, one account each', async () => {
    const other = await kit.seed().account()
    const assigned = await cli(kit.url, 'sim:assign', '--account', other.account.id, '--number', '0733 000 002')
    expect(assigned.code).toBe(0)
    expect(JSON.parse(assigned.stdout)).toEqual({
      sim: { number: '+254733000002', account: other.account.id, assignedAt: expect.any(String) },
      created: true,
    })
    expect((await assignSim(kit.deps, { accountId: other.account.id, number: '+254733000002' })).created).toBe(false)
    const taken = await cli(kit.url, 'sim:assign', '--account', other.account.id, '--number', SIM)
    expect(taken.code).toBe(1)
    expect(taken.stderr.trim()).toBe(`sim:assign: SIM ${SIM} belongs to another account`)
    const bad = await cli(kit.url, 'sim:assign', '--account', other.account.id, '--number', 'not-a-number')
    expect(bad.code).toBe(1)
    expect(bad.stderr.trim()).toMatch(/^sim:assign: number: number "not-a-number" is not/)
    expect((await assignSim(kit.deps, { accountId: other.account.id, number: '22555' })).sim.number).toBe('22555')
    const listed = JSON.parse((await cli(kit.url, 'sim:list', '--account', other.account.id)).stdout)
    expect(listed.sims.map((s: { number: string }) => s.number)).toEqual(['+254733000002', '22555'])
    const gone = await cli(kit.url, 'sim:unassign', '--number', '22555')
    expect(JSON.parse(gone.stdout)).toEqual({ sim: { number: '22555', account: other.account.id }, unassigned: true })
    const missing = await cli(kit.url, 'sim:unassign', '--number', '22555')
    expect(missing.code).toBe(1)
    expect(await kit.db.sim.count({ where: { accountId: other.account.id } })).toBe(1)
  }, 300_000)

  it("refuses a subscribable group on a SIM that is not one of its account's (SMPP), and changes nothing", async () => {
    const s = await kit.seed().account()
    const groups = await kit.db.group.count()
    for (const sim of [SIM, '+254733000077']) {
      await expect(
        createGroup(kit.deps, s.account.id, { name: `On ${sim}`, subscribable: true, subscriptionSim: sim, optinCode: 'GO' }),
      ).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ field: 'subscriptionSim', message: expect.stringContaining('is not one of') }],
      })
    }
    expect(await kit.db.group.count()).toBe(groups)
    // The sandbox keeps SIMs nobody was assigned working, but never another account's.
    const sandbox = kit.depsWith({})
    await expect(
      createGroup(sandbox, s.account.id, { name: 'Sandbox SIM', subscribable: true, subscriptionSim: '+254733000077', optinCode: 'GO' }),
    ).resolves.toMatchObject({ created: true })
    await expect(
      createGroup(sandbox, s.account.id, { name: 'Taken SIM', subscribable: true, subscriptionSim: SIM, optinCode: 'GO' }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' })
  })
})
