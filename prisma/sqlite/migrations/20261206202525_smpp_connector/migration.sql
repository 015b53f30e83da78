-- CreateTable
CREATE TABLE "Sim" (
    "number" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Sim_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "SmppPart" (
    "messageId" TEXT NOT NULL,
    "part" INTEGER NOT NULL,
    "parts" INTEGER NOT NULL,
    "smscMessageId" TEXT,
    "carrierStatus" TEXT,
    "errorCode" TEXT,
    "doneAt" DATETIME,
    "createdAt" DATETIME NOT NULL,

    PRIMARY KEY ("messageId", "part"),
    CONSTRAINT "SmppPart_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "SmppPendingReceipt" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "smscMessageId" TEXT NOT NULL,
    "carrierStatus" TEXT NOT NULL,
    "errorCode" TEXT,
    "doneAt" DATETIME,
    "receivedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "InboundSms" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT,
    "sim" TEXT NOT NULL,
    "sender" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "receivedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "InboundSmsPart" (
    "reference" TEXT NOT NULL,
    "part" INTEGER NOT NULL,
    "parts" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "receivedAt" DATETIME NOT NULL,

    PRIMARY KEY ("reference", "part")
);

-- CreateIndex
CREATE INDEX "Sim_accountId_idx" ON "Sim"("accountId");

-- CreateIndex
CREATE INDEX "SmppPart_smscMessageId_idx" ON "SmppPart"("smscMessageId");

-- CreateIndex
CREATE INDEX "SmppPendingReceipt_smscMessageId_idx" ON "SmppPendingReceipt"("smscMessageId");

-- CreateIndex
CREATE INDEX "SmppPendingReceipt_receivedAt_idx" ON "SmppPendingReceipt"("receivedAt");

-- CreateIndex
CREATE INDEX "InboundSms_accountId_receivedAt_idx" ON "InboundSms"("accountId", "receivedAt");

-- CreateIndex
CREATE INDEX "InboundSms_outcome_receivedAt_idx" ON "InboundSms"("outcome", "receivedAt");
