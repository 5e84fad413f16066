/** Where each part of an account is managed: its overview (the Edit page) and one page per kind of thing it has. */
export const accountPaths = (accountId: number) => {
  const base = `/admin/accounts/${accountId}`;
  return {
    overview: `${base}/edit`,
    domains: `${base}/domains`,
    databases: `${base}/databases`,
    databaseUsers: `${base}/database-users`,
    dns: `${base}/dns`,
    cronJobs: `${base}/cron-jobs`,
  };
};
