-- Revocation must hold on the very next request on every instance. NOTIFY (0001) is delivered
-- asynchronously, so an instance could serve one request from a stale cache. Instead, the same
-- triggers now bump auth_generation in the changing transaction; every request reads that one
-- row (a primary-key read) and an instance drops its cache when the value moved.
INSERT INTO auth_generation (id, value) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION panel_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE auth_generation SET value = value + 1 WHERE id = 1;
  RETURN NULL;
END;
$$;
