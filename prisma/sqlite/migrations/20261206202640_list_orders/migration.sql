-- The lists' orders (GraphQL `orderBy`, docs/api.md "Ordering and filters"): each order walks an
-- index of its own on both databases, so a page under any order reads its rows in order and sorts
-- nothing (test/list-orders.test.ts checks the plans).

-- The messages' index by time gains the uuid, the last key of every order of theirs.
DROP INDEX "Message_accountId_createdAt_idx";

-- Hand-written: Prisma rebuilds "Group" to add a column (RedefineTables), which would drop the
-- ListTotal triggers on it; SQLite adds a column with a constant default in place.
ALTER TABLE "Group" ADD COLUMN "memberCount" INTEGER NOT NULL DEFAULT 0;
UPDATE "Group" SET "memberCount" = (SELECT COUNT(*) FROM "Membership" m WHERE m."groupId" = "Group"."id");
-- Row triggers also fire for the rows ON DELETE CASCADE removes (a contact's memberships).
CREATE TRIGGER "Group_memberCount_insert" AFTER INSERT ON "Membership" BEGIN
    UPDATE "Group" SET "memberCount" = "memberCount" + 1 WHERE "id" = new."groupId";
END;
CREATE TRIGGER "Group_memberCount_delete" AFTER DELETE ON "Membership" BEGIN
    UPDATE "Group" SET "memberCount" = "memberCount" - 1 WHERE "id" = old."groupId";
END;

-- CreateIndex
CREATE INDEX "Group_accountId_nameKey_id_idx" ON "Group"("accountId", "nameKey", "id");

-- CreateIndex
CREATE INDEX "Group_accountId_memberCount_id_idx" ON "Group"("accountId", "memberCount", "id");

-- CreateIndex
CREATE INDEX "Contact_accountId_createdAt_id_idx" ON "Contact"("accountId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Contact_accountId_updatedAt_id_idx" ON "Contact"("accountId", "updatedAt", "id");

-- CreateIndex
CREATE INDEX "Message_accountId_createdAt_id_idx" ON "Message"("accountId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Message_accountId_status_createdAt_id_idx" ON "Message"("accountId", "status", "createdAt", "id");

-- CreateIndex
CREATE INDEX "WebhookDelivery_accountId_createdAt_id_idx" ON "WebhookDelivery"("accountId", "createdAt", "id");
