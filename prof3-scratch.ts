import { Prisma } from './src/generated/sqlite/client.js'
import { startBench } from './bench/harness.js'
import { createAccount } from './src/accounts/create-account.js'
import { parseContacts, upsertContacts } from './src/messaging/contacts.js'
const bench = await startBench()
const { deps } = bench
const { account } = await createAccount(deps, { name: 'P' })
await upsertContacts(deps, account.id, parseContacts(Array.from({ length: 300 }, (_, i) => ({ mobile: `+2547${10_000_000 + i}`, firstName: `N${i}` })), 'KE'))
const time = async (name: string, f: () => Promise<unknown>, n = 400) => { for (let i = 0; i < 30; i++) await f(); const t = performance.now(); for (let i = 0; i < n; i++) await f(); console.log(name, ((performance.now() - t) / n).toFixed(3), 'ms') }
const a = account.id
for (let r = 0; r < 3; r++) {
await time('25 rows x 10 cols', () => deps.db.$queryRaw`SELECT "id","firstName","familyName","otherNames","mobile","email","organization","gender","firstNameKey","familyNameKey" FROM "Contact" WHERE "accountId" = ${a} ORDER BY "firstNameKey" LIMIT 25`)
await time('1 json cell', () => deps.db.$queryRaw`SELECT json_group_array(json_object('id',"id",'firstName',"firstName",'familyName',"familyName",'otherNames',"otherNames",'mobile',"mobile",'email',"email",'organization',"organization",'gender',"gender")) AS j FROM (SELECT * FROM "Contact" WHERE "accountId" = ${a} ORDER BY "firstNameKey" LIMIT 25)`.then((r: any) => JSON.parse(r[0].j)))
await time('SELECT 1', () => deps.db.$queryRaw`SELECT 1`)
}
console.log(await deps.db.$queryRaw`SELECT "createdAt", typeof("createdAt") t FROM "Contact" LIMIT 1`)
await bench.close()
