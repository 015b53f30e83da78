-- AlterTable: each account's one endpoint becomes its first, keeping the account's id as its own.
ALTER TABLE "WebhookEndpoint" DROP CONSTRAINT "WebhookEndpoint_pkey",
ADD COLUMN     "eventTypes" TEXT NOT NULL DEFAULT 'message.status test',
ADD COLUMN     "id" TEXT,
ADD COLUMN     "payloadFormat" TEXT NOT NULL DEFAULT 'legacy';
UPDATE "WebhookEndpoint" SET "id" = "accountId";
ALTER TABLE "WebhookEndpoint" ALTER COLUMN "id" SET NOT NULL,
ADD CONSTRAINT "WebhookEndpoint_pkey" PRIMARY KEY ("id");

-- AlterTable
ALTER TABLE "WebhookDelivery" ADD COLUMN     "attemptsTotal" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "endpointId" TEXT,
ADD COLUMN     "eventType" TEXT NOT NULL DEFAULT 'message.status';

-- Deliveries belong to their account's endpoint (none when it was removed); a test event is one
-- without a message; the attempts made so far number the next one.
UPDATE "WebhookDelivery" d SET
    "endpointId" = (SELECT e."id" FROM "WebhookEndpoint" e WHERE e."accountId" = d."accountId"),
    "eventType" = CASE WHEN d."messageId" IS NULL THEN 'test' ELSE 'message.status' END,
    "attemptsTotal" = (SELECT COUNT(*) FROM "WebhookAttempt" a WHERE a."deliveryId" = d."id");

-- AlterTable
ALTER TABLE "WebhookAttempt" ADD COLUMN     "requestHeaders" TEXT,
ADD COLUMN     "responseBody" TEXT,
ADD COLUMN     "responseHeaders" TEXT,
ADD COLUMN     "responseTruncated" BOOLEAN NOT NULL DEFAULT false;

-- CreateIndex
CREATE INDEX "WebhookEndpoint_accountId_createdAt_idx" ON "WebhookEndpoint"("accountId", "createdAt");

-- CreateIndex
CREATE INDEX "WebhookDelivery_accountId_state_finishedAt_idx" ON "WebhookDelivery"("accountId", "state", "finishedAt");

-- CreateIndex
CREATE INDEX "WebhookDelivery_endpointId_idx" ON "WebhookDelivery"("endpointId");

-- AddForeignKey
ALTER TABLE "WebhookDelivery" ADD CONSTRAINT "WebhookDelivery_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "WebhookEndpoint"("id") ON DELETE SET NULL ON UPDATE CASCADE;
