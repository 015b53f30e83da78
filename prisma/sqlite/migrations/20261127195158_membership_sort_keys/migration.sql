-- AlterTable
ALTER TABLE "Membership" ADD COLUMN "familyNameKey" TEXT;
ALTER TABLE "Membership" ADD COLUMN "firstNameKey" TEXT;

-- CreateIndex
CREATE INDEX "Membership_groupId_firstNameKey_familyNameKey_contactId_idx" ON "Membership"("groupId", "firstNameKey", "familyNameKey", "contactId");

-- Hand-written below (Prisma cannot model triggers). Each membership carries its contact's sort
-- keys, so that a group's list walks the index above in the contacts' name order and skips index
-- entries for a deep page, as the account's list does on "Contact" (src/messaging/contact-list.ts).
UPDATE "Membership" SET ("firstNameKey", "familyNameKey") =
    (SELECT c."firstNameKey", c."familyNameKey" FROM "Contact" c WHERE c."id" = "Membership"."contactId");

-- A membership written without its keys (the opt-in's Prisma upsert) gets them from its contact;
-- add-contacts writes them itself and skips the trigger. SQLite has one writer at a time, so the
-- keys read here are the contact's when the transaction commits.
CREATE TRIGGER "Membership_sort_keys" AFTER INSERT ON "Membership"
    WHEN new."firstNameKey" IS NULL OR new."familyNameKey" IS NULL BEGIN
    UPDATE "Membership" SET ("firstNameKey", "familyNameKey") =
        (SELECT c."firstNameKey", c."familyNameKey" FROM "Contact" c WHERE c."id" = new."contactId")
        WHERE "groupId" = new."groupId" AND "contactId" = new."contactId";
END;

-- A contact whose sort keys change moves in every group it is in.
CREATE TRIGGER "Contact_sort_keys_to_memberships" AFTER UPDATE OF "firstNameKey", "familyNameKey" ON "Contact"
    WHEN old."firstNameKey" IS NOT new."firstNameKey" OR old."familyNameKey" IS NOT new."familyNameKey" BEGIN
    UPDATE "Membership" SET "firstNameKey" = new."firstNameKey", "familyNameKey" = new."familyNameKey"
        WHERE "contactId" = new."id";
END;
