-- Hand-written (no change to prisma/models.prisma): a remembered search follows the changes made
-- since its count instead of running in full again (src/messaging/remembered-searches.ts). Every
-- insert and delete of a contact, and every update of its search text, sort keys or account, leaves
-- one row per contact here, with the contact's search text and sort keys before the write (none for
-- an insert) and its transaction id. A search counted in a snapshot is brought up to date by the
-- rows that snapshot did not see: for each contact, the first such row says whether it matched
-- then and where it sorted, and the contact's row now says the rest. "seq" orders a contact's rows:
-- a second write of a row waits for the first's commit, so it takes its number later.
-- This takes over from "ContactChange" (one row per transaction), which said only that something
-- changed. That table and its triggers stay for one release: during a rolling deploy the instances
-- still running the previous release check it; a later migration drops them. The worker deletes
-- rows of both tables older than an hour (purgeContactChanges).
-- Rows are only ever inserted, so writers never wait for each other here.
CREATE TABLE "ContactEdit" (
    "seq" BIGINT GENERATED ALWAYS AS IDENTITY,
    "accountId" TEXT NOT NULL,
    "txid" xid8 NOT NULL DEFAULT pg_current_xact_id(),
    "contactId" TEXT NOT NULL,
    "oldText" TEXT,
    "oldKey1" TEXT,
    "oldKey2" TEXT,
    "at" TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT "ContactEdit_pkey" PRIMARY KEY ("seq")
);
CREATE INDEX "ContactEdit_accountId_txid_idx" ON "ContactEdit" ("accountId", "txid");

CREATE FUNCTION "contact_edits_inserted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO "ContactEdit" ("accountId", "contactId") SELECT "accountId", "id" FROM changed;
    RETURN NULL;
END $$;
CREATE FUNCTION "contact_edits_deleted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO "ContactEdit" ("accountId", "contactId", "oldText", "oldKey1", "oldKey2")
    SELECT "accountId", "id", "searchText", "firstNameKey", "familyNameKey" FROM changed;
    RETURN NULL;
END $$;
-- Set operations, not a join: the function's cached plan cannot turn into a nested loop over both
-- transition tables (a join did: 60 ms a 1,000-row statement). The rows as they were, for those
-- whose search text, sort keys or account changed; and, for a contact moved to another account
-- (never done), a row of that account with nothing before.
CREATE FUNCTION "contact_edits_updated"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO "ContactEdit" ("accountId", "contactId", "oldText", "oldKey1", "oldKey2")
    SELECT "accountId", "id", "searchText", "firstNameKey", "familyNameKey" FROM (
        SELECT "id", "accountId", "searchText", "firstNameKey", "familyNameKey" FROM was
        EXCEPT SELECT "id", "accountId", "searchText", "firstNameKey", "familyNameKey" FROM changed
    ) d
    UNION ALL
    SELECT "accountId", "id", NULL, NULL, NULL FROM (
        SELECT "id", "accountId" FROM changed EXCEPT SELECT "id", "accountId" FROM was
    ) m;
    RETURN NULL;
END $$;
CREATE TRIGGER "ContactEdit_insert" AFTER INSERT ON "Contact" REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION "contact_edits_inserted"();
CREATE TRIGGER "ContactEdit_delete" AFTER DELETE ON "Contact" REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION "contact_edits_deleted"();
CREATE TRIGGER "ContactEdit_update" AFTER UPDATE ON "Contact" REFERENCING OLD TABLE AS was NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION "contact_edits_updated"();
