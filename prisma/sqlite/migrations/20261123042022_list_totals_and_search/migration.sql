-- CreateTable
CREATE TABLE "ListTotal" (
    "listId" TEXT NOT NULL PRIMARY KEY,
    "total" INTEGER NOT NULL DEFAULT 0
);

-- Hand-written below (Prisma cannot model triggers or FTS5). A future migration that rebuilds
-- "Account", "Group", "Contact" or "Membership" (Prisma's RedefineTables for SQLite drops and renames
-- the table) drops these triggers with it and must create them again; test/contact-totals.test.ts
-- and test/contact-search.test.ts fail when they are missing.

-- Every account (its contacts) and every group (its members) has a ListTotal row from its creation.
INSERT INTO "ListTotal" ("listId", "total")
    SELECT a."id", (SELECT COUNT(*) FROM "Contact" c WHERE c."accountId" = a."id") FROM "Account" a;
INSERT INTO "ListTotal" ("listId", "total")
    SELECT g."id", (SELECT COUNT(*) FROM "Membership" m WHERE m."groupId" = g."id") FROM "Group" g;

CREATE TRIGGER "ListTotal_account_insert" AFTER INSERT ON "Account" BEGIN
    INSERT INTO "ListTotal" ("listId", "total") VALUES (new."id", 0);
END;
CREATE TRIGGER "ListTotal_account_delete" AFTER DELETE ON "Account" BEGIN
    DELETE FROM "ListTotal" WHERE "listId" = old."id";
END;
CREATE TRIGGER "ListTotal_group_insert" AFTER INSERT ON "Group" BEGIN
    INSERT INTO "ListTotal" ("listId", "total") VALUES (new."id", 0);
END;
CREATE TRIGGER "ListTotal_group_delete" AFTER DELETE ON "Group" BEGIN
    DELETE FROM "ListTotal" WHERE "listId" = old."id";
END;
-- Row triggers also fire for the rows ON DELETE CASCADE removes (a contact's memberships).
CREATE TRIGGER "ListTotal_contact_insert" AFTER INSERT ON "Contact" BEGIN
    UPDATE "ListTotal" SET "total" = "total" + 1 WHERE "listId" = new."accountId";
END;
CREATE TRIGGER "ListTotal_contact_delete" AFTER DELETE ON "Contact" BEGIN
    UPDATE "ListTotal" SET "total" = "total" - 1 WHERE "listId" = old."accountId";
END;
CREATE TRIGGER "ListTotal_membership_insert" AFTER INSERT ON "Membership" BEGIN
    UPDATE "ListTotal" SET "total" = "total" + 1 WHERE "listId" = new."groupId";
END;
CREATE TRIGGER "ListTotal_membership_delete" AFTER DELETE ON "Membership" BEGIN
    UPDATE "ListTotal" SET "total" = "total" - 1 WHERE "listId" = old."groupId";
END;

-- Substring search: an FTS5 trigram index over "Contact"."searchText" (external content, keyed by the
-- contact's rowid, so no text is stored twice). It only narrows the candidates: the list query
-- still applies the same LIKE as before to each, so results are exactly the substring match.
-- VACUUM may renumber the rowids of a table without an INTEGER PRIMARY KEY: after a VACUUM run
-- INSERT INTO "ContactSearch"("ContactSearch") VALUES ('rebuild') (docs/operations.md).
CREATE VIRTUAL TABLE "ContactSearch" USING fts5("searchText", content='Contact', tokenize='trigram');
INSERT INTO "ContactSearch"("ContactSearch") VALUES ('rebuild');
CREATE TRIGGER "ContactSearch_insert" AFTER INSERT ON "Contact" BEGIN
    INSERT INTO "ContactSearch"(rowid, "searchText") VALUES (new.rowid, new."searchText");
END;
CREATE TRIGGER "ContactSearch_delete" AFTER DELETE ON "Contact" BEGIN
    INSERT INTO "ContactSearch"("ContactSearch", rowid, "searchText") VALUES ('delete', old.rowid, old."searchText");
END;
CREATE TRIGGER "ContactSearch_update" AFTER UPDATE OF "searchText" ON "Contact" BEGIN
    INSERT INTO "ContactSearch"("ContactSearch", rowid, "searchText") VALUES ('delete', old.rowid, old."searchText");
    INSERT INTO "ContactSearch"(rowid, "searchText") VALUES (new.rowid, new."searchText");
END;
