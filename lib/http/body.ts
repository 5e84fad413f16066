// Request bodies are bounded (DESIGN.md "HTTP contract"): one JSON body is at most 1 MiB, judged
// from Content-Length before anything is read and counted while reading, so no client can make
// the panel hold a huge body in memory.

export const MAX_BODY_BYTES = 1024 * 1024;

export const BODY_TOO_LARGE_MESSAGE = "The request body is larger than 1 MiB";

export class BodyTooLargeError extends Error {
  constructor() {
    super(BODY_TOO_LARGE_MESSAGE);
  }
}

/** True when a Content-Length header announces more than the limit. */
export function declaresTooLargeBody(contentLength: string | null | undefined): boolean {
  return contentLength != null && Number(contentLength) > MAX_BODY_BYTES;
}

/** The body as UTF-8 text; throws BodyTooLargeError as soon as it passes MAX_BODY_BYTES. */
export async function readBoundedText(request: Request): Promise<string> {
  if (declaresTooLargeBody(request.headers.get("content-length"))) throw new BodyTooLargeError();
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    // The rest is not read: server.ts closes a connection whose body was left unread.
    if (size > MAX_BODY_BYTES) throw new BodyTooLargeError();
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
