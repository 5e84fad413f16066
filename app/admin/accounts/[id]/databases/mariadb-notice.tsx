import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { mysqlProvisioner } from "@/lib/provisioning/mysql";

/** On the Databases and Database users tabs of an account on this machine while no MariaDB is configured: how to configure it. */
export function MariaDbNotice({ node }: { node: string }) {
  if (node !== LOCAL_NODE || mysqlProvisioner() !== null) return null;
  return (
    <p className="notice" role="note" data-testid="mariadb-unconfigured">
      MariaDB is not configured: set MYSQL_PROVISION_URL in the panel&apos;s configuration (a MariaDB account that may create databases and
      users) and restart it. Until then databases and their users are records only: nothing is made on a database server.
    </p>
  );
}
