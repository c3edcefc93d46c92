-- A workspace whose deletion is due stays due (docs/data-lifecycle.md). The purge function removes the
-- audit events of a due workspace whatever their age; were the due time movable back, the application's
-- role could make a workspace due, purge its history, and take the deletion back. The service already
-- refuses a cancellation once the window has ended; this makes the database refuse it too.
CREATE FUNCTION tenants_deletion_due_is_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.deletion_due_at <= now()
     AND (NEW.deletion_due_at IS DISTINCT FROM OLD.deletion_due_at OR NEW.deletion_requested_at IS DISTINCT FROM OLD.deletion_requested_at) THEN
    RAISE EXCEPTION 'the deletion of workspace % is due and cannot be taken back', OLD.id USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER tenants_deletion_due_is_final BEFORE UPDATE OF deletion_due_at, deletion_requested_at ON tenants
  FOR EACH ROW EXECUTE FUNCTION tenants_deletion_due_is_final();
