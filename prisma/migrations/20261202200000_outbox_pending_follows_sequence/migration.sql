-- A pending row follows its event's number. Closing the gap a duplicate left renumbers events in the
-- writing transaction (src/outbox/events/enqueue.ts); their pending rows follow here, so that outbox_pending
-- is written by its triggers and the relay alone.
CREATE FUNCTION "outbox_events_pending_sequence"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE outbox_pending SET sequence = NEW.sequence WHERE event_id = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER "outbox_events_pending_sequence" AFTER UPDATE OF "sequence" ON "outbox_events"
  FOR EACH ROW WHEN (OLD."sequence" IS DISTINCT FROM NEW."sequence") EXECUTE FUNCTION "outbox_events_pending_sequence"();
