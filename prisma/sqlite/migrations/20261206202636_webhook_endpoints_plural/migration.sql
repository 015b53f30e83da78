-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_WebhookEndpoint" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "eventTypes" TEXT NOT NULL DEFAULT 'message.status test',
    "payloadFormat" TEXT NOT NULL DEFAULT 'legacy',
    "previousSecret" TEXT,
    "previousSecretUntil" DATETIME,
    "disabledAt" DATETIME,
    "disabledReason" TEXT,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "failingSince" DATETIME,
    "pausedUntil" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "WebhookEndpoint_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- Each account's one endpoint becomes its first, keeping the account's id as its own.
INSERT INTO "new_WebhookEndpoint" ("id", "accountId", "createdAt", "disabledAt", "disabledReason", "failingSince", "failures", "pausedUntil", "previousSecret", "previousSecretUntil", "secret", "updatedAt", "url") SELECT "accountId", "accountId", "createdAt", "disabledAt", "disabledReason", "failingSince", "failures", "pausedUntil", "previousSecret", "previousSecretUntil", "secret", "updatedAt", "url" FROM "WebhookEndpoint";
DROP TABLE "WebhookEndpoint";
ALTER TABLE "new_WebhookEndpoint" RENAME TO "WebhookEndpoint";
CREATE INDEX "WebhookEndpoint_accountId_createdAt_idx" ON "WebhookEndpoint"("accountId", "createdAt");
CREATE TABLE "new_WebhookDelivery" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "endpointId" TEXT,
    "eventType" TEXT NOT NULL DEFAULT 'message.status',
    "messageId" TEXT,
    "body" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "attemptsTotal" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL,
    "leaseUntil" DATETIME,
    "leaseOwner" TEXT,
    "lastError" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" DATETIME,
    "traceparent" TEXT,
    CONSTRAINT "WebhookDelivery_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "WebhookDelivery_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "WebhookEndpoint" ("id") ON DELETE SET NULL ON UPDATE CASCADE,
    CONSTRAINT "WebhookDelivery_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- Deliveries belong to their account's endpoint (none when it was removed); a test event is one
-- without a message; the attempts made so far number the next one.
INSERT INTO "new_WebhookDelivery" ("endpointId", "eventType", "attemptsTotal", "accountId", "attempts", "body", "createdAt", "finishedAt", "id", "lastError", "leaseOwner", "leaseUntil", "messageId", "nextAttemptAt", "state", "traceparent") SELECT
    (SELECT e."id" FROM "WebhookEndpoint" e WHERE e."accountId" = "WebhookDelivery"."accountId"),
    CASE WHEN "messageId" IS NULL THEN 'test' ELSE 'message.status' END,
    (SELECT COUNT(*) FROM "WebhookAttempt" a WHERE a."deliveryId" = "WebhookDelivery"."id"),
    "accountId", "attempts", "body", "createdAt", "finishedAt", "id", "lastError", "leaseOwner", "leaseUntil", "messageId", "nextAttemptAt", "state", "traceparent" FROM "WebhookDelivery";
DROP TABLE "WebhookDelivery";
ALTER TABLE "new_WebhookDelivery" RENAME TO "WebhookDelivery";
CREATE INDEX "WebhookDelivery_state_nextAttemptAt_idx" ON "WebhookDelivery"("state", "nextAttemptAt");
CREATE INDEX "WebhookDelivery_messageId_idx" ON "WebhookDelivery"("messageId");
CREATE INDEX "WebhookDelivery_accountId_state_finishedAt_idx" ON "WebhookDelivery"("accountId", "state", "finishedAt");
CREATE INDEX "WebhookDelivery_endpointId_idx" ON "WebhookDelivery"("endpointId");
CREATE TABLE "new_WebhookAttempt" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "deliveryId" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "statusCode" INTEGER,
    "durationMs" INTEGER NOT NULL,
    "error" TEXT,
    "requestHeaders" TEXT,
    "responseHeaders" TEXT,
    "responseBody" TEXT,
    "responseTruncated" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "WebhookAttempt_deliveryId_fkey" FOREIGN KEY ("deliveryId") REFERENCES "WebhookDelivery" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_WebhookAttempt" ("attempt", "createdAt", "deliveryId", "durationMs", "error", "id", "statusCode", "url") SELECT "attempt", "createdAt", "deliveryId", "durationMs", "error", "id", "statusCode", "url" FROM "WebhookAttempt";
DROP TABLE "WebhookAttempt";
ALTER TABLE "new_WebhookAttempt" RENAME TO "WebhookAttempt";
CREATE INDEX "WebhookAttempt_deliveryId_attempt_idx" ON "WebhookAttempt"("deliveryId", "attempt");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
