import net from "node:net";

// The smallest FastCGI client the panel needs: one GET with no body to a PHP-FPM socket, the
// answer's body read as text, nothing more. It asks PHP-FPM's own ping page (ping.path), which
// FPM answers itself without running any PHP; still, a pool's worker runs as the customer, so
// its answer is bounded in size and time and only ever compared, never interpreted.

const VERSION = 1;
const BEGIN_REQUEST = 1;
const END_REQUEST = 3;
const PARAMS = 4;
const STDIN = 5;
const STDOUT = 6;
const RESPONDER = 1;
const REQUEST_ID = 1;
const HEADER_BYTES = 8;
const MAX_ANSWER_BYTES = 16 * 1024;

function record(type: number, content: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt8(VERSION, 0);
  header.writeUInt8(type, 1);
  header.writeUInt16BE(REQUEST_ID, 2);
  header.writeUInt16BE(content.length, 4);
  return Buffer.concat([header, content]);
}

function lengthBytes(length: number): Buffer {
  if (length < 128) return Buffer.from([length]);
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE((length | 0x80000000) >>> 0, 0);
  return bytes;
}

function params(values: Record<string, string>): Buffer {
  const pairs = Object.entries(values).map(([name, value]) => {
    const [nameBytes, valueBytes] = [Buffer.from(name), Buffer.from(value)];
    return Buffer.concat([lengthBytes(nameBytes.length), lengthBytes(valueBytes.length), nameBytes, valueBytes]);
  });
  return Buffer.concat(pairs);
}

/** The STDOUT of a complete answer (up to END_REQUEST), or null while more is to come. Throws on anything else. */
function answerOf(received: Buffer): Buffer | null {
  const stdout: Buffer[] = [];
  let offset = 0;
  while (offset + HEADER_BYTES <= received.length) {
    const type = received.readUInt8(offset + 1);
    const length = received.readUInt16BE(offset + 4);
    const padding = received.readUInt8(offset + 6);
    const end = offset + HEADER_BYTES + length + padding;
    if (received.readUInt8(offset) !== VERSION) throw new Error("not a FastCGI answer");
    if (end > received.length) return null;
    if (type === END_REQUEST) return Buffer.concat(stdout);
    if (type === STDOUT) stdout.push(received.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + length));
    offset = end;
  }
  return null;
}

/**
 * GETs `scriptName` from the FastCGI server on `socket` and resolves with the answer's body (the
 * part after the headers). Rejects when nothing answers, the answer is not FastCGI, is larger
 * than 16 KiB or takes longer than `timeoutMs`.
 */
export function fastcgiGet(socket: string, scriptName: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const connection = net.connect(socket);
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (error: Error) => {
      connection.destroy();
      reject(error);
    };
    connection.setTimeout(timeoutMs, () => fail(new Error(`no answer within ${timeoutMs} ms`)));
    connection.once("error", fail);
    connection.once("close", () => fail(new Error("the connection closed before the answer ended")));
    connection.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) return fail(new Error("the answer is too large"));
      chunks.push(chunk);
      let stdout: Buffer | null;
      try {
        stdout = answerOf(Buffer.concat(chunks));
      } catch (error) {
        return fail(error as Error);
      }
      if (stdout === null) return;
      connection.removeAllListeners("close");
      connection.destroy();
      const text = stdout.toString("utf8");
      const headersEnd = text.indexOf("\r\n\r\n");
      resolve(headersEnd === -1 ? text : text.slice(headersEnd + 4));
    });
    const begin = Buffer.alloc(8);
    begin.writeUInt16BE(RESPONDER, 0);
    const request = params({ REQUEST_METHOD: "GET", SCRIPT_NAME: scriptName, SCRIPT_FILENAME: scriptName, REQUEST_URI: scriptName, QUERY_STRING: "" });
    connection.write(Buffer.concat([record(BEGIN_REQUEST, begin), record(PARAMS, request), record(PARAMS), record(STDIN)]));
  });
}
