// Preloaded into a test server (node --import): every scrypt the server starts and finishes is
// written, one line each ("start", "end"), to SCRYPT_COUNT_FILE, so a test over HTTP sees how many
// a request cost and how many ran at once. Plain JavaScript: it loads before tsx.
import crypto from "node:crypto";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const file = process.env.SCRYPT_COUNT_FILE;
const realScrypt = crypto.scrypt;
crypto.scrypt = (...args) => {
  const callback = args.pop();
  fs.appendFileSync(file, "start\n");
  realScrypt(...args, (error, key) => {
    fs.appendFileSync(file, "end\n");
    callback(error, key);
  });
};
syncBuiltinESMExports();
