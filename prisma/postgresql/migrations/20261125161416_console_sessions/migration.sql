-- AlterTable
ALTER TABLE "ApiKey" ADD COLUMN     "label" TEXT;

-- AlterTable
ALTER TABLE "WebhookEndpoint" ADD COLUMN     "previousSecret" TEXT,
ADD COLUMN     "previousSecretUntil" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "WebhookDelivery" ALTER COLUMN "messageId" DROP NOT NULL;

-- CreateTable
CREATE TABLE "ConsoleLink" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ConsoleLink_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ConsoleSession" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "revokedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ConsoleSession_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ConsoleLink_tokenHash_key" ON "ConsoleLink"("tokenHash");

-- CreateIndex
CREATE INDEX "ConsoleLink_accountId_idx" ON "ConsoleLink"("accountId");

-- CreateIndex
CREATE UNIQUE INDEX "ConsoleSession_tokenHash_key" ON "ConsoleSession"("tokenHash");

-- CreateIndex
CREATE INDEX "ConsoleSession_accountId_idx" ON "ConsoleSession"("accountId");

-- AddForeignKey
ALTER TABLE "ConsoleLink" ADD CONSTRAINT "ConsoleLink_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ConsoleSession" ADD CONSTRAINT "ConsoleSession_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account"("id") ON DELETE CASCADE ON UPDATE CASCADE;
