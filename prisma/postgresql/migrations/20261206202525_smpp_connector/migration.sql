-- CreateTable
CREATE TABLE "Sim" (
    "number" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Sim_pkey" PRIMARY KEY ("number")
);

-- CreateTable
CREATE TABLE "SmppPart" (
    "messageId" TEXT NOT NULL,
    "part" INTEGER NOT NULL,
    "parts" INTEGER NOT NULL,
    "smscMessageId" TEXT,
    "carrierStatus" TEXT,
    "errorCode" TEXT,
    "doneAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SmppPart_pkey" PRIMARY KEY ("messageId","part")
);

-- CreateTable
CREATE TABLE "SmppPendingReceipt" (
    "id" TEXT NOT NULL,
    "smscMessageId" TEXT NOT NULL,
    "carrierStatus" TEXT NOT NULL,
    "errorCode" TEXT,
    "doneAt" TIMESTAMP(3),
    "receivedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SmppPendingReceipt_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "InboundSms" (
    "id" TEXT NOT NULL,
    "accountId" TEXT,
    "sim" TEXT NOT NULL,
    "sender" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "outcome" TEXT NOT NULL,
    "receivedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "InboundSms_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "InboundSmsPart" (
    "reference" TEXT NOT NULL,
    "part" INTEGER NOT NULL,
    "parts" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "receivedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "InboundSmsPart_pkey" PRIMARY KEY ("reference","part")
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

-- AddForeignKey
ALTER TABLE "Sim" ADD CONSTRAINT "Sim_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SmppPart" ADD CONSTRAINT "SmppPart_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message"("id") ON DELETE CASCADE ON UPDATE CASCADE;
