import net from "node:net";

// An SMTP server that takes every message and keeps it: the other end of a relay in the tests (a
// move's target, an external forwarder's destination). ESMTP without extensions (no STARTTLS, no
// AUTH), so a client speaks plain SMTP to it; nothing is checked and nothing delivered.

export interface SinkMessage {
  from: string;
  to: string[];
  data: string;
}

export interface SmtpSink {
  messages: SinkMessage[];
  stop(): Promise<void>;
}

/** Listens on `host`:`port` until stop(). */
export async function startSmtpSink(host: string, port: number): Promise<SmtpSink> {
  const messages: SinkMessage[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.setEncoding("latin1");
    const reply = (line: string) => socket.write(`${line}\r\n`);
    let envelope: SinkMessage = { from: "", to: [], data: "" };
    let inData = false;
    let buffer = "";
    reply("220 sink.panel-test.invalid ESMTP");
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (;;) {
        if (inData) {
          const end = buffer.indexOf("\r\n.\r\n");
          if (end === -1) return;
          envelope.data = buffer.slice(0, end + 2).replace(/^\.\./gm, ".");
          buffer = buffer.slice(end + 5);
          messages.push(envelope);
          envelope = { from: "", to: [], data: "" };
          inData = false;
          reply("250 2.0.0 kept");
          continue;
        }
        const newline = buffer.indexOf("\r\n");
        if (newline === -1) return;
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 2);
        const address = /<([^>]*)>/.exec(line)?.[1] ?? "";
        switch (line.slice(0, 4).toUpperCase()) {
          case "EHLO":
          case "HELO":
            reply("250 sink.panel-test.invalid");
            break;
          case "MAIL":
            envelope.from = address;
            reply("250 2.1.0 ok");
            break;
          case "RCPT":
            envelope.to.push(address);
            reply("250 2.1.5 ok");
            break;
          case "DATA":
            inData = true;
            reply("354 go on");
            break;
          case "QUIT":
            reply("221 2.0.0 bye");
            socket.end();
            break;
          default:
            reply("250 2.0.0 ok");
        }
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  return {
    messages,
    stop: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
