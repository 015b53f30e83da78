-- Hand-written (no change to prisma/models.prisma): a group's search is remembered as an account's
-- is (src/messaging/remembered-searches.ts). Its matches change when the account's contacts do
-- ("ContactEdit", contact_edits) or when the group's members do: every statement that inserts or
-- deletes memberships now also leaves its transaction id in the group's "ListTotal" row, in the
-- update of "total" it already made. A search counted in a snapshot is unchanged while that id is
-- one the snapshot saw: writers of the row take turns, so the last one is the latest to commit. A
-- group's changes are not followed (no edit rows): after one, its search runs in full. Adding a
-- column without a default rewrites nothing, and instances of the previous release never read it.
ALTER TABLE "ListTotal" ADD COLUMN "txid" xid8;

CREATE OR REPLACE FUNCTION "list_total_memberships_inserted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE "ListTotal" t SET "total" = t."total" + n."rows", "txid" = pg_current_xact_id()
    FROM (SELECT "groupId", COUNT(*) AS "rows" FROM inserted GROUP BY "groupId") n WHERE t."listId" = n."groupId";
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION "list_total_memberships_deleted"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE "ListTotal" t SET "total" = t."total" - n."rows", "txid" = pg_current_xact_id()
    FROM (SELECT "groupId", COUNT(*) AS "rows" FROM deleted GROUP BY "groupId") n WHERE t."listId" = n."groupId";
    RETURN NULL;
END $$;
