-- AlterTable
ALTER TABLE "Membership" ADD COLUMN     "familyNameKey" TEXT,
ADD COLUMN     "firstNameKey" TEXT;

-- CreateIndex
CREATE INDEX "Membership_groupId_firstNameKey_familyNameKey_contactId_idx" ON "Membership"("groupId", "firstNameKey", "familyNameKey", "contactId");

-- Hand-written below (Prisma cannot model triggers). Each membership carries its contact's sort
-- keys, so that a group's list walks the index above in the contacts' name order and skips index
-- entries for a deep page, as the account's list does on "Contact" (src/messaging/contact-list.ts).
UPDATE "Membership" m SET "firstNameKey" = c."firstNameKey", "familyNameKey" = c."familyNameKey"
    FROM "Contact" c WHERE c."id" = m."contactId";

-- A membership written without its keys (the opt-in's Prisma upsert) gets them from its contact;
-- add-contacts writes them itself and skips the call. FOR SHARE: a rename of the contact that has
-- not committed yet is waited for, so its keys are the ones read, and the rename's own trigger
-- (below) waits for this insert in turn; neither can leave the other's keys behind.
CREATE FUNCTION "membership_sort_keys"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    SELECT c."firstNameKey", c."familyNameKey" INTO NEW."firstNameKey", NEW."familyNameKey"
        FROM "Contact" c WHERE c."id" = NEW."contactId" FOR SHARE;
    RETURN NEW;
END $$;
CREATE TRIGGER "Membership_sort_keys" BEFORE INSERT ON "Membership"
    FOR EACH ROW WHEN (NEW."firstNameKey" IS NULL OR NEW."familyNameKey" IS NULL) EXECUTE FUNCTION "membership_sort_keys"();

-- A contact whose sort keys change moves in every group it is in.
CREATE FUNCTION "contact_sort_keys_to_memberships"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE "Membership" SET "firstNameKey" = NEW."firstNameKey", "familyNameKey" = NEW."familyNameKey"
        WHERE "contactId" = NEW."id";
    RETURN NULL;
END $$;
CREATE TRIGGER "Contact_sort_keys_to_memberships" AFTER UPDATE OF "firstNameKey", "familyNameKey" ON "Contact"
    FOR EACH ROW WHEN (OLD."firstNameKey" IS DISTINCT FROM NEW."firstNameKey" OR OLD."familyNameKey" IS DISTINCT FROM NEW."familyNameKey")
    EXECUTE FUNCTION "contact_sort_keys_to_memberships"();
