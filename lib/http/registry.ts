import { accountLifecycleOperations, accountOperations } from "@/lib/accounts/operations";
import { databaseOperations, databaseUserOperations } from "@/lib/databases/operations";
import { dnsOperations } from "@/lib/dns/operations";
import { domainOperations } from "@/lib/domains/operations";
import { metricsOperations } from "@/lib/metrics/operations";
import { ssoOperations } from "@/lib/sso/operations";
import { endpointOf, type HttpMethod, type Operation } from "./operation";

/** Every operation of the API, in the order of SPEC.md. */
export const operations: readonly Operation[] = [
  ...Object.values(ssoOperations),
  ...Object.values(accountLifecycleOperations),
  ...Object.values(metricsOperations),
  ...Object.values(accountOperations),
  ...Object.values(databaseOperations),
  ...Object.values(databaseUserOperations),
  ...Object.values(dnsOperations),
  ...Object.values(domainOperations),
];

const endpoints = new Set(operations.map(endpointOf));

/** Whether "METHOD /api/path/{param}" names an operation (a key's endpoint list). */
export const isKnownEndpoint = (endpoint: string) => endpoints.has(endpoint);

// Paths under /api served outside the registry: the OpenAPI document and next-auth.
const extraRoutes: { pattern: RegExp; methods: HttpMethod[] | "any" }[] = [
  { pattern: /^\/api\/openapi\.json$/, methods: ["GET"] },
  { pattern: /^\/api\/auth\/.+$/, methods: "any" },
];

const templates = [...new Set(operations.map((operation) => operation.path))].map((path) => ({
  pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+").replace(/\./g, "\\.")}/?$`),
  methods: operations.filter((operation) => operation.path === path).map((operation) => operation.method),
}));

export type RouteMatch = { kind: "found" } | { kind: "not_found" } | { kind: "wrong_method"; allow: string[] };

/** How the API answers a method and path before any handler runs (404 and 405 come from here). */
export function matchApiRoute(method: string, pathname: string): RouteMatch {
  for (const route of [...extraRoutes, ...templates]) {
    if (!route.pattern.test(pathname)) continue;
    if (route.methods === "any") return { kind: "found" };
    const allow = route.methods.includes("GET") ? [...route.methods, "HEAD"] : route.methods;
    return allow.includes(method) ? { kind: "found" } : { kind: "wrong_method", allow };
  }
  return { kind: "not_found" };
}
