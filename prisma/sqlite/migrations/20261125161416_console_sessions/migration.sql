-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN "label" TEXT;

-- AlterTable
ALTER TABLE "WebhookEndpoint" ADD COLUMN "previousSecret" TEXT;
ALTER TABLE "WebhookEndpoint" ADD COLUMN "previousSecretUntil" DATETIME;

-- CreateTable
CREATE TABLE "ConsoleLink" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "usedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ConsoleLink_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "ConsoleSession" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "revokedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ConsoleSession_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_WebhookDelivery" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "messageId" TEXT,
    "body" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL,
    "leaseUntil" DATETIME,
    "leaseOwner" TEXT,
    "lastError" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" DATETIME,
    "traceparent" TEXT,
    CONSTRAINT "WebhookDelivery_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "WebhookDelivery_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_WebhookDelivery" ("accountId", "attempts", "body", "createdAt", "finishedAt", "id", "lastError", "leaseOwner", "leaseUntil", "messageId", "nextAttemptAt", "state", "traceparent") SELECT "accountId", "attempts", "body", "createdAt", "finishedAt", "id", "lastError", "leaseOwner", "leaseUntil", "messageId", "nextAttemptAt", "state", "traceparent" FROM "WebhookDelivery";
DROP TABLE "WebhookDelivery";
ALTER TABLE "new_WebhookDelivery" RENAME TO "WebhookDelivery";
CREATE INDEX "WebhookDelivery_state_nextAttemptAt_idx" ON "WebhookDelivery"("state", "nextAttemptAt");
CREATE INDEX "WebhookDelivery_messageId_idx" ON "WebhookDelivery"("messageId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "ConsoleLink_tokenHash_key" ON "ConsoleLink"("tokenHash");

-- CreateIndex
CREATE INDEX "ConsoleLink_accountId_idx" ON "ConsoleLink"("accountId");

-- CreateIndex
CREATE UNIQUE INDEX "ConsoleSession_tokenHash_key" ON "ConsoleSession"("tokenHash");

-- CreateIndex
CREATE INDEX "ConsoleSession_accountId_idx" ON "ConsoleSession"("accountId");
