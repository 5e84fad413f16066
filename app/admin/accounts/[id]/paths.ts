/**
 * Where each part of an account is managed: its overview (the account's own URL) and one tab per
 * kind of thing it has. `/admin/accounts/{id}/edit`, the single page it once was, leads to the overview.
 */
export const accountPaths = (accountId: number) => {
  const base = `/admin/accounts/${accountId}`;
  return {
    overview: base,
    domains: `${base}/domains`,
    databases: `${base}/databases`,
    databaseUsers: `${base}/database-users`,
    dns: `${base}/dns`,
    cronJobs: `${base}/cron-jobs`,
    email: `${base}/email`,
    filesAndSsh: `${base}/files-ssh`,
    php: `${base}/php`,
    certificates: `${base}/certificates`,
    backups: `${base}/backups`,
    settings: `${base}/settings`,
  };
};

/** Where the step an account's action opens (Suspend's reason, Terminate's confirmation) is shown: below its header. */
export const ACCOUNT_STEP = "account-step";
