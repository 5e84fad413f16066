import { assertNoInternals } from "./internals";

// Calls the API as an integrator would. Every error and warning it receives is checked for
// internals (tests/support/internals.ts), in every suite.

export interface Credentials {
  key: string;
  secret: string;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function call<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { credentials?: Credentials; account?: string | number; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  // A connection per request: a test that blocks its event loop (a synchronous sftp upload, a
  // mariadb call) past the server's keep-alive time would otherwise send its next request on a
  // socket the server has closed meanwhile ("other side closed").
  const headers: Record<string, string> = { connection: "close", ...options.headers };
  if (options.credentials) {
    headers["x-api-key"] = options.credentials.key;
    headers["x-api-secret"] = options.credentials.secret;
  }
  if (options.account !== undefined) headers["x-hosting-account"] = String(options.account);
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] = "application/json";
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text, tests assert on it
  }
  if (response.status >= 400 || (parsed && typeof parsed === "object" && "warning" in parsed)) {
    assertNoInternals(`${method} ${path} → ${response.status}`, text);
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** A client bound to one key (and optionally one account). */
export function apiClient(baseUrl: string, credentials?: Credentials, account?: string | number) {
  return {
    get: <T = any>(path: string, headers?: Record<string, string>) => call<T>(baseUrl, "GET", path, { credentials, account, headers }),
    post: <T = any>(path: string, body?: unknown) => call<T>(baseUrl, "POST", path, { credentials, account, body }),
    put: <T = any>(path: string, body?: unknown) => call<T>(baseUrl, "PUT", path, { credentials, account, body }),
    delete: <T = any>(path: string) => call<T>(baseUrl, "DELETE", path, { credentials, account }),
  };
}
