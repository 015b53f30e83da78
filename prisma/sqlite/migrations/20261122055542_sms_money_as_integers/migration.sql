-- AlterTable
ALTER TABLE "ScheduledCarrierEvent" ADD COLUMN "leaseOwner" TEXT;
ALTER TABLE "ScheduledCarrierEvent" ADD COLUMN "mccmnc" TEXT;

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Account" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "timezone" TEXT NOT NULL DEFAULT 'UTC',
    "pricePerPage" BIGINT NOT NULL DEFAULT 10000,
    "creditBalance" BIGINT NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);
INSERT INTO "new_Account" ("createdAt", "creditBalance", "id", "name", "pricePerPage", "timezone") SELECT "createdAt", "creditBalance", "id", "name", "pricePerPage", "timezone" FROM "Account";
DROP TABLE "Account";
ALTER TABLE "new_Account" RENAME TO "Account";
CREATE TABLE "new_Message" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "mobile" TEXT NOT NULL,
    "sender" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "encoding" TEXT NOT NULL,
    "pages" INTEGER NOT NULL,
    "costPerPage" BIGINT NOT NULL,
    "creditsDeducted" BIGINT NOT NULL,
    "mccmnc" TEXT NOT NULL DEFAULT '',
    "sandbox" BOOLEAN NOT NULL DEFAULT false,
    "gateway" TEXT NOT NULL,
    "gatewayMessageId" TEXT,
    "status" TEXT NOT NULL,
    "done" BOOLEAN NOT NULL DEFAULT false,
    "carrierStatus" TEXT,
    "carrierErrorCode" TEXT,
    "broadcastAt" DATETIME NOT NULL,
    "doneAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Message_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Message" ("accountId", "broadcastAt", "carrierErrorCode", "carrierStatus", "costPerPage", "createdAt", "creditsDeducted", "done", "doneAt", "encoding", "gateway", "gatewayMessageId", "id", "mccmnc", "mobile", "pages", "sandbox", "sender", "status", "text", "updatedAt") SELECT "accountId", "broadcastAt", "carrierErrorCode", "carrierStatus", "costPerPage", "createdAt", "creditsDeducted", "done", "doneAt", "encoding", "gateway", "gatewayMessageId", "id", "mccmnc", "mobile", "pages", "sandbox", "sender", "status", "text", "updatedAt" FROM "Message";
DROP TABLE "Message";
ALTER TABLE "new_Message" RENAME TO "Message";
CREATE INDEX "Message_accountId_createdAt_idx" ON "Message"("accountId", "createdAt");
CREATE INDEX "Message_gateway_gatewayMessageId_idx" ON "Message"("gateway", "gatewayMessageId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
