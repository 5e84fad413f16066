import { operations } from "@/lib/http/registry";
import { type Audience, endpointOf } from "@/lib/http/operation";

// Which operations a key of each scope can reach, from the one registry: an account key only the
// client operations, a reseller key those and the account lifecycle (and its own backups), an
// admin key every one (lib/http/with-api-key.ts refuses the rest with 403 whatever the list says).
// The key form offers only these, the service refuses the others, and the list counts against them.

export type ApiKeyScope = "admin" | "reseller" | "account";

const audiencesOf: Record<ApiKeyScope, readonly Audience[]> = {
  admin: ["admin", "reseller", "client"],
  reseller: ["reseller", "client"],
  account: ["client"],
};

/** Every operation as the key form shows it: its area (the registry's tag), who may call it, its summary. */
export interface EndpointChoice {
  endpoint: string;
  area: string;
  audience: Audience;
  method: string;
  summary: string;
}

export const endpointChoices: readonly EndpointChoice[] = operations.map((operation) => ({
  endpoint: endpointOf(operation),
  area: operation.tag,
  audience: operation.audience,
  method: operation.method,
  summary: operation.summary,
}));

const audienceOfEndpoint = new Map(endpointChoices.map((choice) => [choice.endpoint, choice.audience]));

export const isOfferedTo = (scope: ApiKeyScope, endpoint: string) => {
  const audience = audienceOfEndpoint.get(endpoint);
  return audience !== undefined && audiencesOf[scope].includes(audience);
};

/** The operations a key of `scope` can reach. */
export const endpointsOfferedTo = (scope: ApiKeyScope) => endpointChoices.filter((choice) => audiencesOf[scope].includes(choice.audience));

/** How many operations a key of `scope` can reach ("Endpoints: 2 of 84"). */
export const offeredCount = (scope: ApiKeyScope) => endpointsOfferedTo(scope).length;

/**
 * The form's presets, each a set of endpoints cut to what the key's scope reaches: every read
 * (GET), and what a billing system drives (create, suspend, unsuspend, terminate, change package:
 * the account lifecycle operations and the plans).
 */
export const endpointPresets = [
  { name: "Read-only", describe: "every GET operation", picks: (choice: EndpointChoice) => choice.method === "GET" },
  {
    name: "Billing lifecycle",
    describe: "create, change, suspend, unsuspend and terminate accounts; read plans",
    picks: (choice: EndpointChoice) => choice.area === "Account lifecycle",
  },
] as const;

const scopeNames: Record<ApiKeyScope, string> = { admin: "admin keys", reseller: "reseller keys", account: "account keys" };

/** Why a key of `scope` cannot have `endpoints`, or null when it can. */
export function endpointsRefusedFor(scope: ApiKeyScope, endpoints: readonly string[]): string | null {
  const refused = endpoints.filter((endpoint) => audienceOfEndpoint.has(endpoint) && !isOfferedTo(scope, endpoint));
  if (refused.length === 0) return null;
  const list = refused.length > 3 ? `${refused.slice(0, 3).join(", ")} and ${refused.length - 3} more` : refused.join(", ");
  return `${list} ${refused.length === 1 ? "is" : "are"} not open to ${scopeNames[scope]}: remove ${refused.length === 1 ? "it" : "them"} or choose another scope`;
}
