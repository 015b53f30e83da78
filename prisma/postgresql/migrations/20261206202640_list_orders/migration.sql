-- The lists' orders (GraphQL `orderBy`): each order walks an index of its own, so a page under any
-- order reads its rows in order and sorts nothing (test/list-orders.test.ts checks the plans).

-- DropIndex
DROP INDEX "Message_accountId_createdAt_idx";

-- AlterTable
ALTER TABLE "Group" ADD COLUMN     "memberCount" INTEGER NOT NULL DEFAULT 0;

-- Hand-written: the groups' size, kept like their "ListTotal" rows (list_totals_and_search), once
-- per statement. A future migration that rebuilds "Membership" must create these triggers again
-- (test/list-orders.test.ts fails without them).
UPDATE "Group" g SET "memberCount" = n."rows" FROM (SELECT "groupId", COUNT(*) AS "rows" FROM "Membership" GROUP BY "groupId") n
    WHERE g."id" = n."groupId";
CREATE FUNCTION "group_member_count_inserted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE "Group" g SET "memberCount" = g."memberCount" + n."rows"
    FROM (SELECT "groupId", COUNT(*) AS "rows" FROM inserted GROUP BY "groupId") n WHERE g."id" = n."groupId";
    RETURN NULL;
END $$;
CREATE TRIGGER "Group_memberCount_insert" AFTER INSERT ON "Membership" REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION "group_member_count_inserted"();
CREATE FUNCTION "group_member_count_deleted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE "Group" g SET "memberCount" = g."memberCount" - n."rows"
    FROM (SELECT "groupId", COUNT(*) AS "rows" FROM deleted GROUP BY "groupId") n WHERE g."id" = n."groupId";
    RETURN NULL;
END $$;
CREATE TRIGGER "Group_memberCount_delete" AFTER DELETE ON "Membership" REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION "group_member_count_deleted"();

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
