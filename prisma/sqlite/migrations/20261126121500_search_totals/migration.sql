-- Hand-written (no change to prisma/models.prisma): what a cached search total is checked against
-- (src/messaging/search-totals.ts). "changes" counts the writes to an account's contacts that can
-- change a search's matches: every insert and delete, and every update of "searchText". A search
-- total remembered with the count it was read with is exact as long as the count is unchanged.
-- Like the triggers of list_totals_and_search, a future migration that rebuilds "ListTotal" or
-- "Contact" must keep this column and create these triggers again (test/search-totals.test.ts
-- fails without them).
ALTER TABLE "ListTotal" ADD COLUMN "changes" INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER "ListTotal_contact_insert";
CREATE TRIGGER "ListTotal_contact_insert" AFTER INSERT ON "Contact" BEGIN
    UPDATE "ListTotal" SET "total" = "total" + 1, "changes" = "changes" + 1 WHERE "listId" = new."accountId";
END;
DROP TRIGGER "ListTotal_contact_delete";
CREATE TRIGGER "ListTotal_contact_delete" AFTER DELETE ON "Contact" BEGIN
    UPDATE "ListTotal" SET "total" = "total" - 1, "changes" = "changes" + 1 WHERE "listId" = old."accountId";
END;
CREATE TRIGGER "ListTotal_contact_update" AFTER UPDATE OF "searchText", "accountId" ON "Contact"
    WHEN old."searchText" IS NOT new."searchText" OR old."accountId" IS NOT new."accountId" BEGIN
    UPDATE "ListTotal" SET "changes" = "changes" + 1 WHERE "listId" IN (old."accountId", new."accountId");
END;
