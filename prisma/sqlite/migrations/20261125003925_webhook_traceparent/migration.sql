-- AlterTable
ALTER TABLE "WebhookDelivery" ADD COLUMN "traceparent" TEXT;
