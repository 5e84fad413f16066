import base from "./playwright.config";
// Untracked: the suite under a machine loaded by CI (nice 19), with longer waits.
export default { ...base, timeout: 600_000, expect: { timeout: 60_000 } };
