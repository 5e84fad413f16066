-- Every server instance caches API keys and the accounts they act on (lib/auth/key-cache.ts).
-- Any change that can revoke or re-scope access notifies the channel "panel_auth", whoever made
-- it (a panel instance, the command line, psql), and each instance drops its cache.
-- Updates of last_used_at/last_used_ip alone do not notify (UPDATE OF lists the columns that do).
CREATE FUNCTION panel_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('panel_auth', TG_TABLE_NAME);
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER api_keys_auth_changed
  AFTER DELETE OR UPDATE OF name, key, secret_hash, scope, reseller_id, account_id, is_enabled,
    allowed_ips, allow_all_endpoints, allowed_endpoints, created_by_admin_id
  ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION panel_auth_changed();
--> statement-breakpoint
CREATE TRIGGER hosting_accounts_auth_changed
  AFTER DELETE OR UPDATE OF username, status, reseller_id
  ON hosting_accounts FOR EACH STATEMENT EXECUTE FUNCTION panel_auth_changed();
--> statement-breakpoint
CREATE TRIGGER resellers_auth_changed
  AFTER DELETE ON resellers FOR EACH STATEMENT EXECUTE FUNCTION panel_auth_changed();
