-- CreateIndex
CREATE UNIQUE INDEX "ScheduledCarrierEvent_messageId_key" ON "ScheduledCarrierEvent"("messageId");
