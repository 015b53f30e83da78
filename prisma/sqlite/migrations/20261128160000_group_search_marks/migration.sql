-- Hand-written (no change to prisma/models.prisma): a group's search is remembered as an account's
-- is (src/messaging/remembered-searches.ts). Its matches change when the account's contacts do
-- (the account's "changes", contact_edits) or when the group's members do: every insert and delete
-- of a membership now raises the group's "changes" too, and a group's search is counted under both
-- counters. A group's changes are not followed (no edit rows): after one, its search runs in full.
-- Like the triggers of list_totals_and_search, a future migration that rebuilds "ListTotal" or
-- "Membership" must create these triggers again (test/remembered-searches.test.ts fails without them).
DROP TRIGGER "ListTotal_membership_insert";
DROP TRIGGER "ListTotal_membership_delete";
-- Row triggers also fire for the rows ON DELETE CASCADE removes (a contact's memberships).
CREATE TRIGGER "ListTotal_membership_insert" AFTER INSERT ON "Membership" BEGIN
    UPDATE "ListTotal" SET "total" = "total" + 1, "changes" = "changes" + 1 WHERE "listId" = new."groupId";
END;
CREATE TRIGGER "ListTotal_membership_delete" AFTER DELETE ON "Membership" BEGIN
    UPDATE "ListTotal" SET "total" = "total" - 1, "changes" = "changes" + 1 WHERE "listId" = old."groupId";
END;
