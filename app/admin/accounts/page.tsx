import type { Metadata } from "next";
import { getDb } from "@/db/client";
import { listAccounts } from "@/lib/accounts/service";

export const metadata: Metadata = { title: "Hosting accounts" };

export default async function AccountsPage() {
  const accounts = await listAccounts(await getDb());
  return (
    <>
      <h1>Hosting accounts</h1>
      <p className="muted">
        Create accounts with <code>npm run panel -- account create --username U --domain D</code>.
      </p>
      {accounts.length === 0 ? (
        <div className="card empty">No hosting accounts yet.</div>
      ) : (
        <table className="data">
          <thead>
            <tr>
              <th>Username</th>
              <th>Domain</th>
              <th>Plan</th>
              <th>Status</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {accounts.map((account) => (
              <tr key={account.id}>
                <td>{account.username}</td>
                <td>{account.domain}</td>
                <td>{account.plan.name}</td>
                <td>
                  <span className={`badge ${account.is_suspended ? "off" : "on"}`}>{account.status}</span>
                </td>
                <td>{new Date(account.created_at).toLocaleDateString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
