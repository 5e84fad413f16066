-- Every bump of auth_generation (0004) is also announced on the channel "panel_auth_generation",
-- the new value as payload. On PGlite the server is the only process on the database
-- (DATA_DIR/panel.lock) and a notification reaches it while the changing transaction commits,
-- before the committing call returns: it keeps the value in memory instead of reading it on
-- every request (db/client.ts). PostgreSQL instances keep reading it, as a notification from
-- another process may arrive after the next request.
CREATE FUNCTION panel_auth_generation_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('panel_auth_generation', NEW.value::text);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER auth_generation_notify
  AFTER UPDATE ON auth_generation FOR EACH ROW EXECUTE FUNCTION panel_auth_generation_notify();
