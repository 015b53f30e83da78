-- CreateTable
CREATE TABLE "Account" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "timezone" TEXT NOT NULL DEFAULT 'UTC',
    "pricePerPage" DECIMAL NOT NULL DEFAULT 1,
    "creditBalance" DECIMAL NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "ApiKey" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revokedAt" DATETIME,
    "lastUsedAt" DATETIME,
    CONSTRAINT "ApiKey_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Group" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "nameKey" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "subscribable" BOOLEAN NOT NULL DEFAULT false,
    "subscriptionAutoresponse" TEXT,
    "unsubscribeAutoresponse" TEXT,
    "subscriptionSim" TEXT,
    "optinCode" TEXT,
    "optoutCode" TEXT,
    "searchText" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Group_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "SimCode" (
    "accountId" TEXT NOT NULL,
    "sim" TEXT NOT NULL,
    "code" TEXT NOT NULL,
    "groupId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,

    PRIMARY KEY ("accountId", "sim", "code"),
    CONSTRAINT "SimCode_groupId_fkey" FOREIGN KEY ("groupId") REFERENCES "Group" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Contact" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "mobile" TEXT NOT NULL,
    "firstName" TEXT NOT NULL,
    "familyName" TEXT NOT NULL DEFAULT '',
    "otherNames" TEXT,
    "email" TEXT,
    "gender" TEXT NOT NULL DEFAULT '',
    "organization" TEXT,
    "whatsappNumber" TEXT,
    "viberNumber" TEXT,
    "skypeId" TEXT,
    "facebook" TEXT,
    "twitter" TEXT,
    "linkedin" TEXT,
    "groupme" TEXT,
    "wechat" TEXT,
    "youtube" TEXT,
    "firstNameKey" TEXT NOT NULL,
    "familyNameKey" TEXT NOT NULL,
    "searchText" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Contact_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Membership" (
    "groupId" TEXT NOT NULL,
    "contactId" TEXT NOT NULL,
    "selfSubscribed" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("groupId", "contactId"),
    CONSTRAINT "Membership_groupId_fkey" FOREIGN KEY ("groupId") REFERENCES "Group" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Membership_contactId_fkey" FOREIGN KEY ("contactId") REFERENCES "Contact" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "SubscriptionEvent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "groupId" TEXT NOT NULL,
    "contactId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "sim" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "SubscriptionEvent_groupId_fkey" FOREIGN KEY ("groupId") REFERENCES "Group" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "SubscriptionEvent_contactId_fkey" FOREIGN KEY ("contactId") REFERENCES "Contact" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Message" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "mobile" TEXT NOT NULL,
    "sender" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "encoding" TEXT NOT NULL,
    "pages" INTEGER NOT NULL,
    "costPerPage" DECIMAL NOT NULL,
    "creditsDeducted" DECIMAL NOT NULL,
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

-- CreateTable
CREATE TABLE "MessageStatusUpdate" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "messageId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "carrierStatus" TEXT,
    "carrierErrorCode" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "MessageStatusUpdate_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "ScheduledCarrierEvent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "messageId" TEXT NOT NULL,
    "carrierStatus" TEXT NOT NULL,
    "errorCode" TEXT,
    "dueAt" DATETIME NOT NULL,
    "leaseUntil" DATETIME
);

-- CreateTable
CREATE TABLE "WebhookEndpoint" (
    "accountId" TEXT NOT NULL PRIMARY KEY,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "disabledAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "WebhookEndpoint_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "WebhookDelivery" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "accountId" TEXT NOT NULL,
    "messageId" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL,
    "leaseUntil" DATETIME,
    "leaseOwner" TEXT,
    "lastError" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" DATETIME,
    CONSTRAINT "WebhookDelivery_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "WebhookDelivery_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "WebhookAttempt" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "deliveryId" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "statusCode" INTEGER,
    "durationMs" INTEGER NOT NULL,
    "error" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "WebhookAttempt_deliveryId_fkey" FOREIGN KEY ("deliveryId") REFERENCES "WebhookDelivery" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "ApiKey_prefix_key" ON "ApiKey"("prefix");

-- CreateIndex
CREATE INDEX "ApiKey_accountId_idx" ON "ApiKey"("accountId");

-- CreateIndex
CREATE UNIQUE INDEX "Group_accountId_nameKey_key" ON "Group"("accountId", "nameKey");

-- CreateIndex
CREATE INDEX "SimCode_groupId_idx" ON "SimCode"("groupId");

-- CreateIndex
CREATE INDEX "Contact_accountId_firstNameKey_familyNameKey_id_idx" ON "Contact"("accountId", "firstNameKey", "familyNameKey", "id");

-- CreateIndex
CREATE UNIQUE INDEX "Contact_accountId_mobile_key" ON "Contact"("accountId", "mobile");

-- CreateIndex
CREATE INDEX "Membership_contactId_idx" ON "Membership"("contactId");

-- CreateIndex
CREATE INDEX "Membership_groupId_selfSubscribed_idx" ON "Membership"("groupId", "selfSubscribed");

-- CreateIndex
CREATE INDEX "SubscriptionEvent_groupId_createdAt_idx" ON "SubscriptionEvent"("groupId", "createdAt");

-- CreateIndex
CREATE INDEX "Message_accountId_createdAt_idx" ON "Message"("accountId", "createdAt");

-- CreateIndex
CREATE INDEX "Message_gateway_gatewayMessageId_idx" ON "Message"("gateway", "gatewayMessageId");

-- CreateIndex
CREATE INDEX "MessageStatusUpdate_messageId_createdAt_idx" ON "MessageStatusUpdate"("messageId", "createdAt");

-- CreateIndex
CREATE INDEX "ScheduledCarrierEvent_dueAt_idx" ON "ScheduledCarrierEvent"("dueAt");

-- CreateIndex
CREATE INDEX "WebhookDelivery_state_nextAttemptAt_idx" ON "WebhookDelivery"("state", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "WebhookDelivery_messageId_idx" ON "WebhookDelivery"("messageId");

-- CreateIndex
CREATE INDEX "WebhookAttempt_deliveryId_attempt_idx" ON "WebhookAttempt"("deliveryId", "attempt");
