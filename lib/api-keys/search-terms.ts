// What the key list's search box may put in a URL. Plain functions without node: imports: the
// browser's table runs them before it navigates.

/** A search term as the list shows a secret ("AbCd••••••••"): its mask dropped, what is left searched. */
export const withoutMask = (term: string) => term.replace(/[•…*]+/g, "").trim();

/**
 * Whether a search term may hold a secret, or enough of one to matter: a run of 12 or more
 * base62 characters that is not part of a public key (`hcp_…`). Such a term never goes into a
 * URL (the admin list searches it by POST): a URL ends up in the browser's history, the
 * server's and proxies' logs and `Referer` headers. 12 characters: far more than the 4 a list
 * shows, short enough that typing a secret out never puts most of it in the address bar.
 */
export const mayHoldSecret = (term: string) => /[0-9A-Za-z]{12,}/.test(term.replace(/hcp_[0-9A-Za-z]*/g, " "));
