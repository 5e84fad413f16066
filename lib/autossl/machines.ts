import { z } from "zod";
import { hostOfNode, type NodeRow } from "@/lib/nodes/hosts";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { type CertificateMachine, type InstalledCertificate, localMachine, type TlsFiles } from "@/lib/provisioning/acme";

// The machine that serves a node's sites, as AutoSSL needs it (docs/nodes.md "AutoSSL on
// nodes"): the panel's own in this process (with the job's TlsFiles), any other node through its
// queue — the same lib/provisioning/acme.ts there, run by its agent with its own CERTS_DIR,
// ACME_CHALLENGE_DIR and web server. Only the request (CSR), the challenges and the signed chain
// travel; a key never does. What a node answers is checked before the panel records it.

/** A certificate as a node reports it (lib/agent/operations.ts CertificateReport). */
const reportSchema = z
  .object({ names: z.array(z.string().max(253)).max(100), expires_at: z.iso.datetime() })
  .transform((report): InstalledCertificate => ({ names: report.names, expiresAt: new Date(report.expires_at) }));
const listSchema = z.array(z.object({ domain: z.string(), certificate: reportSchema.nullable() }));

export function certificateMachineOf(node: NodeRow, localFiles: TlsFiles): CertificateMachine {
  if (node.name === LOCAL_NODE) return localMachine(localFiles);
  const host = hostOfNode(node);
  return {
    certificates: async (domains) => new Map(listSchema.parse(await host.run("certificates.list", { domains: domains ?? null })).map((entry) => [entry.domain, entry.certificate])),
    request: async (domain, names) => z.string().parse(await host.run("certificates.request", { domain, names })),
    answerChallenge: async (name, token, keyAuthorization) => host.run("certificates.challenge", { name, token, key_authorization: keyAuthorization }),
    removeChallenges: async (tokens) => host.run("certificates.remove-challenges", { tokens }),
    install: async (domain, chain) => reportSchema.parse(await host.run("certificates.install", { domain, chain })),
    remove: async (domains) => host.run("certificates.remove", { domains }),
    reload: async () => host.run("certificates.reload", null),
  };
}
