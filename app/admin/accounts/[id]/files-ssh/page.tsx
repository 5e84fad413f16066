import type { Metadata } from "next";
import { listSshKeys, sshEnabled } from "@/lib/ssh/service";
import { AccountHeader } from "../account-header";
import { accountOfPage, type AccountPageProps } from "../account-page";
import { accountPaths } from "../paths";
import { SshKeys } from "./ssh-keys";

export const metadata: Metadata = { title: "Files & SSH" };

// How the customer reaches their files: SFTP always, a shell with SSH access (set on the Settings tab), and their keys.
export default async function AccountFilesAndSshPage({ params }: AccountPageProps) {
  const { db, account } = await accountOfPage(params);
  return (
    <>
      <AccountHeader db={db} account={account} trail={[{ label: "Files & SSH" }]} title={`Files & SSH of “${account.username}”`} />
      <p className="muted">
        SSH access: <strong>{account.has_ssh_access ? "SFTP and a shell" : "SFTP only"}</strong> (changed on the{" "}
        <a href={accountPaths(account.id).settings}>Settings</a> tab).
      </p>
      <SshKeys
        account={{ id: account.id, username: account.username }}
        keys={(await listSshKeys(db, account.id)).ssh_keys}
        connection={{ host: account.ssh.host, port: account.ssh.port, shell: account.ssh.shell, managed: sshEnabled() }}
      />
    </>
  );
}
