// `npm run panel -- …`. `node join` and `node agent` run on a node, which has no panel database
// and needs only lib/agent and lib/provisioning: they load nothing else (lib/agent/cli.ts). Every
// other command is the panel's own (lib/cli/panel.ts).
const argv = process.argv.slice(2);
const onNode = argv[0] === "node" && (argv[1] === "join" || argv[1] === "agent");
const { runCli } = onNode ? await import("@/lib/agent/cli") : await import("./panel");
process.exitCode = await runCli(argv);
export {};
