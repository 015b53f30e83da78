-- AlterTable
ALTER TABLE "Channel" ADD COLUMN     "fallbackDescription" TEXT,
ADD COLUMN     "fallbackHlsUrl" TEXT,
ADD COLUMN     "fallbackName" TEXT,
ADD COLUMN     "fallbackThumbnail" TEXT,
ADD COLUMN     "streamUrl" TEXT;

-- AlterTable
ALTER TABLE "Episode" ADD COLUMN     "onDemandAvailableAt" TIMESTAMP(3);
