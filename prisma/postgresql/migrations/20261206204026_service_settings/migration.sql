-- CreateTable
CREATE TABLE "ServiceSetting" (
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ServiceSetting_pkey" PRIMARY KEY ("name")
);
