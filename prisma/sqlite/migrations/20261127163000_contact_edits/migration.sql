-- Hand-written (no change to prisma/models.prisma): a remembered search follows the changes made
-- since its count instead of running in full again (src/messaging/remembered-searches.ts). Every
-- insert and delete of a contact, and every update of its search text, sort keys or account, raises
-- the account's "changes" in "ListTotal" (the mark a search is counted under) and leaves one row
-- here with the new value, holding the contact's search text and sort keys before the write (none
-- for an insert). A search counted under mark m is brought up to date by the rows after m: for each
-- contact, the first says whether it matched then and where it sorted, and the contact's row now
-- says the rest. The worker deletes rows older than an hour (purgeContactChanges): they are a rowid
-- table in insertion order, so the purge reads only what it deletes.
-- Like the triggers of list_totals_and_search, a future migration that rebuilds "ListTotal" or
-- "Contact" must create these triggers again (test/remembered-searches.test.ts fails without them).
CREATE TABLE "ContactEdit" (
    "accountId" TEXT NOT NULL,
    "change" INTEGER NOT NULL,
    "contactId" TEXT NOT NULL,
    "oldText" TEXT,
    "oldKey1" TEXT,
    "oldKey2" TEXT,
    "at" INTEGER NOT NULL DEFAULT (unixepoch())
);
CREATE INDEX "ContactEdit_accountId_change_idx" ON "ContactEdit" ("accountId", "change");

DROP TRIGGER "ListTotal_contact_insert";
CREATE TRIGGER "ListTotal_contact_insert" AFTER INSERT ON "Contact" BEGIN
    UPDATE "ListTotal" SET "total" = "total" + 1, "changes" = "changes" + 1 WHERE "listId" = new."accountId";
    INSERT INTO "ContactEdit" ("accountId", "change", "contactId")
        SELECT "listId", "changes", new."id" FROM "ListTotal" WHERE "listId" = new."accountId";
END;
DROP TRIGGER "ListTotal_contact_delete";
CREATE TRIGGER "ListTotal_contact_delete" AFTER DELETE ON "Contact" BEGIN
    UPDATE "ListTotal" SET "total" = "total" - 1, "changes" = "changes" + 1 WHERE "listId" = old."accountId";
    INSERT INTO "ContactEdit" ("accountId", "change", "contactId", "oldText", "oldKey1", "oldKey2")
        SELECT "listId", "changes", old."id", old."searchText", old."firstNameKey", old."familyNameKey" FROM "ListTotal" WHERE "listId" = old."accountId";
END;
DROP TRIGGER "ListTotal_contact_update";
CREATE TRIGGER "ListTotal_contact_update" AFTER UPDATE OF "searchText", "firstNameKey", "familyNameKey", "accountId" ON "Contact"
    WHEN old."searchText" IS NOT new."searchText" OR old."firstNameKey" IS NOT new."firstNameKey"
        OR old."familyNameKey" IS NOT new."familyNameKey" OR old."accountId" IS NOT new."accountId" BEGIN
    UPDATE "ListTotal" SET "changes" = "changes" + 1 WHERE "listId" IN (old."accountId", new."accountId");
    INSERT INTO "ContactEdit" ("accountId", "change", "contactId", "oldText", "oldKey1", "oldKey2")
        SELECT "listId", "changes", old."id", old."searchText", old."firstNameKey", old."familyNameKey" FROM "ListTotal" WHERE "listId" = old."accountId";
    -- A contact moved to another account (never done): a row of that account with nothing before.
    INSERT INTO "ContactEdit" ("accountId", "change", "contactId")
        SELECT "listId", "changes", new."id" FROM "ListTotal" WHERE "listId" = new."accountId" AND new."accountId" IS NOT old."accountId";
END;
