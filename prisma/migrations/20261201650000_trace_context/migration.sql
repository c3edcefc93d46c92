-- The W3C traceparent an inbound event arrived with and the one an outbox event was emitted under, so that
-- applying an event and delivering what it emitted join the trace of the request that brought it
-- (docs/operations.md, "Tracing"). Empty while tracing is off; adding a nullable column rewrites nothing.

-- AlterTable
ALTER TABLE "inbox_events" ADD COLUMN "trace_context" TEXT;

-- AlterTable
ALTER TABLE "outbox_events" ADD COLUMN "trace_context" TEXT;
