// SPDX-License-Identifier: Apache-2.0
//
// Test receiver for `omniprof agent`, on independent stacks: a gRPC server
// (@grpc/grpc-js) serving ProfilesService/Export, and an HTTP server taking
// OTLP/HTTP (POST /v1development/profiles) and Pyroscope pushes
// (POST /ingest?...&format=pprof, decoded with pprof-format). Every request
// is decoded and appended as one JSON line to --out; check.js judges them.
//
//   node receiver.js --out FILE [--grpc-port N] [--http-port N]
//                    [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]]
//                    [--partial-success MSG]
//
// --tls-client-ca: gRPC calls must present a client certificate this CA signed
// (mutual TLS); a call without one is refused in the handshake.
//
// --partial-success: OTLP replies (HTTP and gRPC) say they kept the request partly
// (ExportProfilesServiceResponse.partial_success.error_message = MSG).
//
// Prints "ready" on stdout once listening, and nothing else there.
'use strict';
const fs = require('fs');
const http = require('http');
const zlib = require('zlib');
const grpc = require('@grpc/grpc-js');
const { Profile } = require('pprof-format');
const { decodeRequest } = require('./schema');

const args = {};
for (let i = 2; i < process.argv.length; i += 2)
  args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];

function record(obj) {
  fs.appendFileSync(args.out, JSON.stringify(obj, (k, v) => {
    if (typeof v === 'bigint') return v.toString();
    if (v && v.type === 'Buffer' && Array.isArray(v.data)) return Buffer.from(v.data).toString('hex');
    return v;
  }) + '\n');
}

function recordOtlp(transport, body, headers) {
  try {
    record({ transport, headers, request: decodeRequest(body) });
    return null;
  } catch (e) {
    record({ transport, error: String(e) });
    return e;
  }
}

// A pprof profile as names: one entry per sample, stack leaf first.
function summarizePprof(buf) {
  const p = Profile.decode(buf);
  const str = (i) => p.stringTable.strings[Number(i)];
  const fn = new Map(p.function.map((f) => [Number(f.id), str(f.name)]));
  const loc = new Map(p.location.map((l) => [Number(l.id), l.line.map((ln) => fn.get(Number(ln.functionId)))]));
  return {
    sampleTypes: p.sampleType.map((t) => [str(t.type), str(t.unit)]),
    periodType: p.periodType ? [str(p.periodType.type), str(p.periodType.unit)] : null,
    period: String(p.period),
    samples: p.sample.map((s) => ({
      stack: s.locationId.flatMap((id) => loc.get(Number(id)) || ['?']),
      values: s.value.map(String),
      labels: Object.fromEntries(s.label.map((l) => [str(l.key), l.str ? str(l.str) : String(l.num)])),
      // Pyroscope drops numeric labels on ingest: check.js refuses them.
      numericLabels: s.label.filter((l) => !l.str && Number(l.num) !== 0).map((l) => str(l.key)),
    })),
  };
}

// The ExportProfilesServiceResponse to answer: empty (full success), or with
// partial_success (field 1) { error_message (field 2) } (lengths < 128).
function exportReply() {
  if (!args['partial-success']) return Buffer.alloc(0);
  const msg = Buffer.from(args['partial-success']);
  const inner = Buffer.concat([Buffer.from([0x12, msg.length]), msg]);
  return Buffer.concat([Buffer.from([0x0a, inner.length]), inner]);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function onHttp(req, res) {
  let body = await readBody(req);
  const url = new URL(req.url, 'http://receiver');
  try {
    if ((req.headers['content-encoding'] || '') === 'gzip') body = zlib.gunzipSync(body);
  } catch (e) {
    res.writeHead(400).end();
    return;
  }
  if (req.method === 'POST' && url.pathname === '/v1development/profiles') {
    const err = recordOtlp('http', body, { 'content-type': req.headers['content-type'],
                                            'content-encoding': req.headers['content-encoding'],
                                            'user-agent': req.headers['user-agent'] || null,
                                            authorization: req.headers.authorization });
    if (err) { res.writeHead(400).end(); return; }
    res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end(exportReply());
    return;
  }
  if (req.method === 'POST' && url.pathname === '/ingest') {
    try {
      // pprof files are gzip'ed inside, whatever the transport did.
      const raw = body[0] === 0x1f && body[1] === 0x8b ? zlib.gunzipSync(body) : body;
      record({ transport: 'pyroscope', query: Object.fromEntries(url.searchParams),
               authorization: req.headers.authorization || null,
               'user-agent': req.headers['user-agent'] || null, profile: summarizePprof(raw),
               // For check.js's Pyroscope rules (pyroscope_rules.js): the bytes as sent.
               receivedMs: Date.now(), raw: raw.toString('base64') });
      res.writeHead(200).end();
    } catch (e) {
      record({ transport: 'pyroscope', error: String(e) });
      res.writeHead(400).end();
    }
    return;
  }
  res.writeHead(404).end();
}

async function main() {
  fs.writeFileSync(args.out, '');
  if (args['grpc-port']) {
    const server = new grpc.Server();
    const passthrough = (x) => x;
    server.addService({
      Export: {
        path: '/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export',
        requestStream: false, responseStream: false,
        requestSerialize: passthrough, requestDeserialize: passthrough,
        responseSerialize: passthrough, responseDeserialize: passthrough,
      },
    }, {
      Export: (call, callback) => {
        const md = call.metadata.getMap();
        // grpc-js turns the grpc-timeout header into the call's deadline.
        const deadline = call.getDeadline();
        const err = recordOtlp('grpc', call.request, { 'grpc-encoding': md['grpc-encoding'] || null,
                                                       'user-agent': md['user-agent'] || null,
                                                       deadline: Number.isFinite(Number(deadline)) ? Number(deadline) : null,
                                                       authorization: md.authorization || null });
        if (err) callback({ code: grpc.status.INVALID_ARGUMENT, details: String(err) });
        else callback(null, exportReply());
      },
    });
    const creds = args['tls-cert']
      ? grpc.ServerCredentials.createSsl(
        args['tls-client-ca'] ? fs.readFileSync(args['tls-client-ca']) : null,
        [{ cert_chain: fs.readFileSync(args['tls-cert']), private_key: fs.readFileSync(args['tls-key']) }],
        !!args['tls-client-ca'])
      : grpc.ServerCredentials.createInsecure();
    await new Promise((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${args['grpc-port']}`, creds, (e) => (e ? reject(e) : resolve())));
  }
  if (args['http-port']) {
    const server = http.createServer((req, res) => { onHttp(req, res).catch(() => res.end()); });
    await new Promise((resolve) => server.listen(Number(args['http-port']), '127.0.0.1', resolve));
  }
  process.stdout.write('ready\n');
  // The test kills the receiver; until then it serves. A bound keeps a stray one from lingering.
  setTimeout(() => process.exit(0), Number(args['max-seconds'] || 300) * 1000);
}

main().catch((e) => { process.stderr.write(`receiver: ${e.stack || e}\n`); process.exit(1); });
