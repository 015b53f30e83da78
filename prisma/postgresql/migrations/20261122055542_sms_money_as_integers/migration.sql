-- AlterTable
ALTER TABLE "Account" ALTER COLUMN "pricePerPage" SET DEFAULT 10000,
ALTER COLUMN "pricePerPage" SET DATA TYPE BIGINT,
ALTER COLUMN "creditBalance" SET DEFAULT 0,
ALTER COLUMN "creditBalance" SET DATA TYPE BIGINT;

-- AlterTable
ALTER TABLE "Message" ALTER COLUMN "costPerPage" SET DATA TYPE BIGINT,
ALTER COLUMN "creditsDeducted" SET DATA TYPE BIGINT;

-- AlterTable
ALTER TABLE "ScheduledCarrierEvent" ADD COLUMN     "leaseOwner" TEXT,
ADD COLUMN     "mccmnc" TEXT;
