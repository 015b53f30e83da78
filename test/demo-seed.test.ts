import { describe, expect, it } from 'vitest'
import { targets } from './kit/databases.js'
import { useKit, fixedClock } from './kit/kit.js'
import { seedDemo } from '../src/demo/seed-demo.js'
import { graphql } from '../src/graphql/typed-documents.js'

// demo:seed promises that every channel endpoint shows live data right away, whatever the time of
// day it is run at: seed at several local times (Nairobi, UTC+3) and read every path at once.
const SEED_TIMES = ['2026-11-23T00:00:00+03:00', '2026-11-23T00:59:59+03:00', '2026-11-23T13:30:00+03:00', '2026-11-23T23:59:00+03:00']

describe.each(targets)('demo:seed on $name', (target) => {
  const clock = fixedClock(SEED_TIMES[0]!)
  const kit = useKit(target, { clock, env: { CHANNEL_CACHE_MS: '0' } })

  it.each(SEED_TIMES)('at %s every channel endpoint shows live data, and the account works', async (at) => {
    clock.set(at)
    const seeded = await seedDemo(kit.deps)
    const get = async (path: string) => {
      const res = await kit.rest('GET', `/api${path}`)
      expect(res.status, path).toBe(200)
      return res.body
    }
    const { uuid, slug } = seeded.channel
    expect((await get(`/channels/${uuid}/status`)).current_video).toMatchObject({
      name: expect.any(String),
      remaining_time: expect.any(Number),
    })
    const current = await get(`/channels/${slug}/programs/current`)
    expect(current).toMatchObject({ status: 'on_air', program: { name: expect.any(String) }, episode: { status: 'on_air' } })
    expect(['upcoming', 'pre_show']).toContain((await get(`/channels/${slug}/programs/next`)).next.state)
    expect((await get(`/channels/${slug}/programs/upcoming`)).upcoming.length).toBeGreaterThan(1)
    expect((await get(`/channels/${slug}/programs/next/3`)).upcoming).toHaveLength(3)
    expect((await get(`/channels/${uuid}/schedule`)).schedule.length).toBeGreaterThan(0)
    expect((await get(`/channels/${uuid}/catchups`)).catchups.length).toBeGreaterThan(0)
    const programs = (await get(`/channels/${slug}/programs`)).programs
    expect(programs.map((p: { slug: string }) => p.slug)).toEqual(expect.arrayContaining(['demo-newsroom', 'demo-stories']))
    const episodes = (await get(`/programs/${current.program.id}/episodes`)).episodes
    expect(episodes.map((e: { status: string }) => e.status)).toContain('on_air')

    // The key works on the messaging API, with the seeded groups and contacts, and can send.
    const contacts = await kit.rest('GET', '/api/contacts', { key: seeded.apiKey })
    expect(contacts.status).toBe(200)
    expect(contacts.body.meta.total).toBe(12)
    const groups = await kit.rest('GET', '/api/contact/groups', { key: seeded.apiKey })
    expect(groups.body.data.map((g: { name: string }) => g.name)).toEqual(['Customers', 'Newsletter', 'Staff'])
    const sent = await kit.gql(graphql('mutation { sendSms(input: { to: "0712000001", message: "Hello" }) { status } }'), {}, seeded.apiKey)
    expect(sent.sendSms.status).not.toBe('NOCREDT')
  })

  it('hands the refreshed demo channel to the newest demo account', async () => {
    const first = await seedDemo(kit.deps)
    const second = await seedDemo(kit.deps)
    expect(second.channel.uuid).toBe(first.channel.uuid)
    const channel = await kit.db.channel.findUniqueOrThrow({ where: { id: second.channel.uuid } })
    expect(channel.operatorAccountId).toBe(second.account.uuid)
  })
})
