-- CreateTable
CREATE TABLE "BulkSend" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "groupId" TEXT NOT NULL,
    "sender" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "encoding" TEXT NOT NULL,
    "pages" INTEGER NOT NULL,
    "costPerPage" BIGINT NOT NULL,
    "recipientCount" INTEGER NOT NULL,
    "creditsDeducted" BIGINT NOT NULL,
    "status" TEXT NOT NULL,
    "idempotencyKey" TEXT,
    "leaseOwner" TEXT,
    "leaseUntil" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "BulkSend_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "BulkSendRecipient" (
    "bulkSendId" TEXT NOT NULL,
    "contactId" TEXT NOT NULL,
    "mobile" TEXT NOT NULL,
    "messageId" TEXT,

    CONSTRAINT "BulkSendRecipient_pkey" PRIMARY KEY ("bulkSendId","contactId")
);

-- CreateIndex
CREATE INDEX "BulkSend_status_leaseUntil_idx" ON "BulkSend"("status", "leaseUntil");

-- CreateIndex
CREATE UNIQUE INDEX "BulkSend_accountId_idempotencyKey_key" ON "BulkSend"("accountId", "idempotencyKey");

-- CreateIndex
CREATE UNIQUE INDEX "BulkSendRecipient_messageId_key" ON "BulkSendRecipient"("messageId");

-- CreateIndex
CREATE INDEX "BulkSendRecipient_bulkSendId_messageId_idx" ON "BulkSendRecipient"("bulkSendId", "messageId");

-- AddForeignKey
ALTER TABLE "BulkSend" ADD CONSTRAINT "BulkSend_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BulkSendRecipient" ADD CONSTRAINT "BulkSendRecipient_bulkSendId_fkey" FOREIGN KEY ("bulkSendId") REFERENCES "BulkSend"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BulkSendRecipient" ADD CONSTRAINT "BulkSendRecipient_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message"("id") ON DELETE CASCADE ON UPDATE CASCADE;
