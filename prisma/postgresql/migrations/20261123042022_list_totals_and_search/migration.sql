-- CreateTable
CREATE TABLE "ListTotal" (
    "listId" TEXT NOT NULL,
    "total" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "ListTotal_pkey" PRIMARY KEY ("listId")
);

-- Hand-written below (Prisma cannot model triggers or a trigram index).

-- Every account (its contacts) and every group (its members) has a ListTotal row from its creation.
INSERT INTO "ListTotal" ("listId", "total")
    SELECT a."id", (SELECT COUNT(*) FROM "Contact" c WHERE c."accountId" = a."id") FROM "Account" a;
INSERT INTO "ListTotal" ("listId", "total")
    SELECT g."id", (SELECT COUNT(*) FROM "Membership" m WHERE m."groupId" = g."id") FROM "Group" g;

-- SET search_path FROM CURRENT: the functions find "ListTotal" in this migration's schema whatever
-- the caller's search_path is.
CREATE FUNCTION "list_total_open"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO "ListTotal" ("listId", "total") VALUES (NEW."id", 0);
    RETURN NULL;
END $$;
CREATE FUNCTION "list_total_close"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    DELETE FROM "ListTotal" WHERE "listId" = OLD."id";
    RETURN NULL;
END $$;
CREATE TRIGGER "ListTotal_account_insert" AFTER INSERT ON "Account" FOR EACH ROW EXECUTE FUNCTION "list_total_open"();
CREATE TRIGGER "ListTotal_account_delete" AFTER DELETE ON "Account" FOR EACH ROW EXECUTE FUNCTION "list_total_close"();
CREATE TRIGGER "ListTotal_group_insert" AFTER INSERT ON "Group" FOR EACH ROW EXECUTE FUNCTION "list_total_open"();
CREATE TRIGGER "ListTotal_group_delete" AFTER DELETE ON "Group" FOR EACH ROW EXECUTE FUNCTION "list_total_close"();

-- Inserts are counted once per statement (add-contacts writes 500 rows a statement).
CREATE FUNCTION "list_total_contacts_inserted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE "ListTotal" t SET "total" = t."total" + n."rows"
    FROM (SELECT "accountId", COUNT(*) AS "rows" FROM inserted GROUP BY "accountId") n WHERE t."listId" = n."accountId";
    RETURN NULL;
END $$;
CREATE TRIGGER "ListTotal_contact_insert" AFTER INSERT ON "Contact" REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION "list_total_contacts_inserted"();
-- A contact delete counts BEFORE the row goes, so the account's total is locked before the cascade
-- to its memberships locks a group's: the same order as add-contacts (contacts, then memberships),
-- so a delete and an add-contacts running at once cannot deadlock on the two totals.
CREATE FUNCTION "list_total_contact_deleted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE "ListTotal" SET "total" = "total" - 1 WHERE "listId" = OLD."accountId";
    RETURN OLD;
END $$;
CREATE TRIGGER "ListTotal_contact_delete" BEFORE DELETE ON "Contact" FOR EACH ROW EXECUTE FUNCTION "list_total_contact_deleted"();
CREATE FUNCTION "list_total_memberships_inserted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE "ListTotal" t SET "total" = t."total" + n."rows"
    FROM (SELECT "groupId", COUNT(*) AS "rows" FROM inserted GROUP BY "groupId") n WHERE t."listId" = n."groupId";
    RETURN NULL;
END $$;
CREATE TRIGGER "ListTotal_membership_insert" AFTER INSERT ON "Membership" REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION "list_total_memberships_inserted"();
CREATE FUNCTION "list_total_memberships_deleted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE "ListTotal" t SET "total" = t."total" - n."rows"
    FROM (SELECT "groupId", COUNT(*) AS "rows" FROM deleted GROUP BY "groupId") n WHERE t."listId" = n."groupId";
    RETURN NULL;
END $$;
CREATE TRIGGER "ListTotal_membership_delete" AFTER DELETE ON "Membership" REFERENCING OLD TABLE AS deleted
    FOR EACH STATEMENT EXECUTE FUNCTION "list_total_memberships_deleted"();

-- Substring search: a pg_trgm GIN index serves "searchText" LIKE '%term%' (the same predicate as
-- before, rechecked per row, so results do not change). The extension is database-wide; it goes to
-- "public" so dropping one schema (tests use one each) never drops it, and the index names the
-- operator class in whatever schema the extension already lives in.
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
DO $$
DECLARE ext_schema text;
BEGIN
    SELECT n.nspname INTO ext_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
    EXECUTE format('CREATE INDEX "Contact_searchText_trgm_idx" ON "Contact" USING gin ("searchText" %I.gin_trgm_ops)', ext_schema);
END $$;
