-- AlterTable
ALTER TABLE "Channel" ADD COLUMN "fallbackDescription" TEXT;
ALTER TABLE "Channel" ADD COLUMN "fallbackHlsUrl" TEXT;
ALTER TABLE "Channel" ADD COLUMN "fallbackName" TEXT;
ALTER TABLE "Channel" ADD COLUMN "fallbackThumbnail" TEXT;
ALTER TABLE "Channel" ADD COLUMN "streamUrl" TEXT;

-- AlterTable
ALTER TABLE "Episode" ADD COLUMN "onDemandAvailableAt" DATETIME;
