// Loaded into every test server (tests/support/server.ts, `--import`): the server exits when
// the process that started it goes, however it went. Its standard input is a pipe from that
// parent, which the kernel closes when the parent dies — even by SIGKILL, when no teardown runs
// (a Playwright run stopped on its timeout left its server running for hours, at 16 % CPU).
// Test code only: the panel's own server.ts never watches its standard input.

process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
