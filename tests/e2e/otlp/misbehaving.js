// SPDX-License-Identifier: Apache-2.0
//
// Receivers that misbehave, for the agent's lifecycle tests
// (tests/e2e/test_lifecycle.c), on node's own net/http:
//
//   node misbehaving.js --mode blackhole --port N
//     accepts TCP connections and never answers (nor closes them);
//   node misbehaving.js --mode bigreply --port N --out FILE [--mb 100]
//     reads each request whole, appends one line per request to FILE
//     ("request BYTES"), then answers 200 with a body of MB MiB, streamed.
//
// Prints "ready" on stdout once listening, and nothing else there.
'use strict';
const fs = require('fs');
const http = require('http');
const net = require('net');

const args = {};
for (let i = 2; i < process.argv.length; i += 2)
  args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const port = Number(args.port);

function ready() {
  process.stdout.write('ready\n');
  // The test kills the receiver; a bound keeps a stray one from lingering.
  setTimeout(() => process.exit(0), Number(args['max-seconds'] || 120) * 1000);
}

if (args.mode === 'blackhole') {
  const held = [];
  const server = net.createServer((sock) => {
    held.push(sock); // keep it open, read nothing back, write nothing
    sock.on('error', () => {});
  });
  server.listen(port, '127.0.0.1', ready);
} else if (args.mode === 'bigreply') {
  if (args.out) fs.writeFileSync(args.out, '');
  const total = Number(args.mb || 100) * 1024 * 1024;
  const chunk = Buffer.alloc(64 * 1024, 0x41);
  const server = http.createServer((req, res) => {
    let bytes = 0;
    req.on('data', (c) => { bytes += c.length; });
    req.on('end', () => {
      if (args.out) fs.appendFileSync(args.out, `request ${bytes}\n`);
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf', 'Content-Length': total });
      let sent = 0;
      const pump = () => {
        while (sent < total) {
          sent += chunk.length;
          if (!res.write(chunk)) { res.once('drain', pump); return; }
        }
        res.end();
      };
      res.on('close', () => { sent = total; }); // the client hung up: stop
      pump();
    });
  });
  server.listen(port, '127.0.0.1', ready);
} else {
  process.stderr.write(`misbehaving: unknown --mode ${args.mode}\n`);
  process.exit(2);
}
