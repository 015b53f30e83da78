-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_WebhookEndpoint" (
    "accountId" TEXT NOT NULL PRIMARY KEY,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "disabledAt" DATETIME,
    "disabledReason" TEXT,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "failingSince" DATETIME,
    "pausedUntil" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "WebhookEndpoint_accountId_fkey" FOREIGN KEY ("accountId") REFERENCES "Account" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_WebhookEndpoint" ("accountId", "createdAt", "disabledAt", "secret", "updatedAt", "url") SELECT "accountId", "createdAt", "disabledAt", "secret", "updatedAt", "url" FROM "WebhookEndpoint";
DROP TABLE "WebhookEndpoint";
ALTER TABLE "new_WebhookEndpoint" RENAME TO "WebhookEndpoint";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;
