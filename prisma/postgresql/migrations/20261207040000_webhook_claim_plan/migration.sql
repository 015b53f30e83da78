-- Hand-written (no change to prisma/models.prisma): the webhook claim's candidates
-- (src/webhooks/dispatcher.ts, claimDueDeliveries), as a function so that its plan does not hang
-- on the table's statistics. Planned as a plain statement, the candidates' plan did: on a table
-- not analysed since a burst of deliveries (a fresh one, or one whose last ANALYZE saw few
-- pending), PostgreSQL expected a handful of due rows and read every due one and sorted them,
-- for each claim (5 to 13 ms a claim at 10,000 due, docs/performance.md), where the walk of the
-- ("state", "nextAttemptAt") index in order stops after the LIMIT. The function's own settings
-- leave the planner that walk alone: no bitmap scan, no sequential scan, no sort.
-- The due deliveries, oldest first, at most "most" of them, locked as they are read (SKIP LOCKED:
-- two instances claiming at once take different rows); those of a paused endpoint, of an endpoint
-- in "fullEndpoints" or of an account in "fullAccounts" left out (their slots on this instance
-- are taken).
CREATE FUNCTION "webhook_due_candidates"("dueBy" timestamp(3), "most" integer, "fullEndpoints" text[], "fullAccounts" text[])
    RETURNS TABLE ("id" text, "accountId" text, "endpointId" text, "nextAttemptAt" timestamp(3))
    LANGUAGE sql VOLATILE
    SET search_path FROM CURRENT SET enable_bitmapscan = off SET enable_seqscan = off SET enable_sort = off
AS $$
    SELECT d."id", d."accountId", d."endpointId", d."nextAttemptAt" FROM "WebhookDelivery" d
    WHERE d."state" = 'pending' AND d."nextAttemptAt" <= "dueBy" AND (d."leaseUntil" IS NULL OR d."leaseUntil" < "dueBy")
      AND (d."endpointId" IS NULL OR d."endpointId" <> ALL ("fullEndpoints"))
      AND d."accountId" <> ALL ("fullAccounts")
      AND NOT EXISTS (SELECT 1 FROM "WebhookEndpoint" e WHERE e."id" = d."endpointId" AND e."pausedUntil" > "dueBy")
    ORDER BY d."nextAttemptAt" LIMIT "most"
    FOR UPDATE OF d SKIP LOCKED
$$;
