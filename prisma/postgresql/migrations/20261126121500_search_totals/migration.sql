-- Hand-written (no change to prisma/models.prisma): what a cached search total is checked against
-- (src/messaging/search-totals.ts). Every transaction that inserts, deletes or changes the
-- "searchText" of an account's contacts leaves one row here, with its transaction id. A search
-- total remembered with the snapshot it was counted in is exact as long as no such row is visible
-- now that was not visible to that snapshot. Rows are only ever inserted, so writers never wait for
-- each other here (a per-account counter would be one more row lock in every contact write, taken
-- after the contacts' own: add-contacts and a single edit could then deadlock). The worker deletes
-- rows older than an hour (src/messaging/search-totals.ts, purgeContactChanges).
CREATE TABLE "ContactChange" (
    "accountId" TEXT NOT NULL,
    "txid" xid8 NOT NULL DEFAULT pg_current_xact_id(),
    "at" TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT "ContactChange_pkey" PRIMARY KEY ("accountId", "txid")
);
CREATE INDEX "ContactChange_at_idx" ON "ContactChange" ("at");

CREATE FUNCTION "contact_changes_inserted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO "ContactChange" ("accountId") SELECT DISTINCT "accountId" FROM changed ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER "ContactChange_insert" AFTER INSERT ON "Contact" REFERENCING NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION "contact_changes_inserted"();
CREATE TRIGGER "ContactChange_delete" AFTER DELETE ON "Contact" REFERENCING OLD TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION "contact_changes_inserted"();
-- An update counts when it changes what a search matches: the search text (or, never done, the
-- account). Set operations, not a join: the function's cached plan cannot turn into a nested loop
-- over both transition tables (a join did: 60 ms a 1,000-row statement).
CREATE FUNCTION "contact_changes_updated"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO "ContactChange" ("accountId")
    SELECT DISTINCT d."accountId" FROM (
        (SELECT "id", "accountId", "searchText" FROM changed EXCEPT SELECT "id", "accountId", "searchText" FROM was)
        UNION ALL
        (SELECT "id", "accountId", "searchText" FROM was EXCEPT SELECT "id", "accountId", "searchText" FROM changed)
    ) d
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER "ContactChange_update" AFTER UPDATE ON "Contact" REFERENCING OLD TABLE AS was NEW TABLE AS changed
    FOR EACH STATEMENT EXECUTE FUNCTION "contact_changes_updated"();
