// SPDX-License-Identifier: Apache-2.0
//
// Judges what receiver.js recorded. Prints one line per finding and
// "check: OK ..." at the end; exits 1 on the first failure.
//
//   node check.js --file F --mode otlp|pyroscope|continuity --pid N
//        --exe PATH --service NAME --chain main,chain_01,...,leaf
//        [--frequency HZ] [--transport grpc|http] [--min-seconds S]
//        [--authorization VALUE] [--auth USER:PASSWORD]
//        [--resource-attrs JSON]  (otlp: attributes every resource of the pid must carry)
//        [--python-script PATH]  (otlp: a CPython process running PATH; --chain
//                                 names its Python functions, outermost first)
//        [--v8-script PATH]      (otlp: a node process running PATH: its JavaScript
//                                 functions, as --python-script's, in v8js frames)
//   node check.js --file F --mode cpu-after --pid N --cpu C --after-ns T [--min-events K]
//   node check.js --file F --mode offcpu-set --pid N --chain A,B,... --cpu-pid M --cpu-chain C,D,...
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');

const args = {};
for (let i = 2; i < process.argv.length; i += 2)
  args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];

function fail(msg) {
  console.log(`check: FAIL: ${msg}`);
  process.exit(1);
}
function expect(cond, msg) { if (!cond) fail(msg); }

const records = fs.readFileSync(args.file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const pid = Number(args.pid);
const chain = (args.chain || '').split(',').filter(Boolean);
const hz = Number(args.frequency || 20);

// The profile.frame.type values a location may carry: only those of the
// semantic conventions (v1.44; the reference agent's spelling: one per
// runtime it unwinds). Where the unwinder stopped is a native frame too.
const FRAME_TYPES = ['native', 'kernel', 'cpython', 'jvm', 'v8js', 'ruby', 'perl', 'php',
                     'dotnet', 'beam', 'go', 'rust'];
const SCHEMA_URL = 'https://opentelemetry.io/schemas/1.44.0';
const USER_AGENT = /^omniprof\/\d+\.\d+\.\d+/;

for (const r of records) expect(!r.error, `a ${r.transport} request did not decode: ${r.error}`);

// The file identity the agent should report: SHA-256 over the first and last
// 4 KiB and the length (big-endian u64), first 16 bytes in hex.
function htlhash(path) {
  const data = fs.readFileSync(path);
  const len = Buffer.alloc(8);
  len.writeBigUInt64BE(BigInt(data.length));
  const h = crypto.createHash('sha256');
  h.update(data.subarray(0, 4096));
  h.update(data.subarray(Math.max(0, data.length - 4096)));
  h.update(len);
  return h.digest('hex').slice(0, 32);
}

// Counts samples (events) whose stack holds the chain ending at its last
// frame, and those where that frame is the leaf at all. stack: root first.
function chainCounts(stacks) {
  let leaf = 0, complete = 0;
  const want = chain.join(';');
  for (const { stack, n } of stacks) {
    const idx = stack.lastIndexOf(chain[chain.length - 1]);
    if (idx < 0) continue;
    leaf += n;
    if (stack.slice(0, idx + 1).join(';').endsWith(want)) complete += n;
  }
  return { leaf, complete };
}

function attrValue(v) {
  if (!v) return undefined;
  if (v.value === 'string_value') return v.string_value;
  if (v.value === 'int_value') return Number(v.int_value);
  if (v.value === 'bool_value') return v.bool_value;
  return v[v.value];
}

function checkDictionary(d) {
  const zeroMsg = (m, what) => {
    for (const [k, v] of Object.entries(m)) {
      const empty = v === 0 || v === '0' || v === '' || v === null ||
        (Array.isArray(v) && v.length === 0) || (Buffer.isBuffer(v) && v.length === 0) ||
        (typeof v === 'string' && /^0*$/.test(v));
      expect(empty, `${what}[0] is not the zero value (${k}=${JSON.stringify(v)})`);
    }
  };
  expect(d.string_table[0] === '', 'string_table[0] is not ""');
  zeroMsg(d.mapping_table[0], 'mapping_table');
  zeroMsg(d.location_table[0], 'location_table');
  zeroMsg(d.function_table[0], 'function_table');
  zeroMsg(d.stack_table[0], 'stack_table');
  expect(d.attribute_table[0].key_strindex === 0 && !d.attribute_table[0].value,
    'attribute_table[0] is not the zero value');
  const link = d.link_table[0];
  expect(link && link.trace_id === '0'.repeat(32) && link.span_id === '0'.repeat(16),
    `link_table[0] is not 16 + 8 zero bytes (${JSON.stringify(link)})`);
}

// Everything one process reported over the OTLP requests.
function otlpProcess(transportFilter) {
  const out = { requests: 0, profiles: [], stacks: [], events: 0, resources: [], mappings: [],
                frameTypes: new Set(), threadIds: new Set(), threadNames: new Set(), cpus: new Set(),
                cpuEvents: [] };
  for (const r of records) {
    if (r.transport !== 'grpc' && r.transport !== 'http') continue;
    if (transportFilter && r.transport !== transportFilter) continue;
    out.requests++;
    if (args.authorization)
      expect(r.headers.authorization === args.authorization,
        `authorization header ${r.headers.authorization}, not ${args.authorization}`);
    expect(USER_AGENT.test(r.headers['user-agent'] || ''), `user-agent ${r.headers['user-agent']}`);
    if (r.transport === 'grpc')
      expect(r.headers.deadline !== null, 'a gRPC call without grpc-timeout (no deadline)');
    const d = r.request.dictionary;
    checkDictionary(d);
    const s = (i) => d.string_table[i];
    const attr = (i) => {
      const a = d.attribute_table[i];
      return [s(a.key_strindex), attrValue(a.value)];
    };
    for (const rp of r.request.resource_profiles) {
      expect(rp.schema_url === SCHEMA_URL, `resource schema_url "${rp.schema_url}"`);
      for (const sp of rp.scope_profiles)
        expect(sp.schema_url === SCHEMA_URL, `scope schema_url "${sp.schema_url}"`);
      const ra = Object.fromEntries(rp.resource.attributes.map((kv) => [kv.key, attrValue(kv.value)]));
      if (ra['process.pid'] !== pid) continue;
      out.resources.push(ra);
      for (const sp of rp.scope_profiles) {
        for (const prof of sp.profiles) {
          out.profiles.push({ time: BigInt(prof.time_unix_nano), duration: BigInt(prof.duration_nano),
                              sampleType: [s(prof.sample_type.type_strindex), s(prof.sample_type.unit_strindex)],
                              periodType: [s(prof.period_type.type_strindex), s(prof.period_type.unit_strindex)],
                              period: Number(prof.period), idLen: prof.profile_id.length / 2 });
          const t0 = BigInt(prof.time_unix_nano), t1 = t0 + BigInt(prof.duration_nano);
          for (const smp of prof.samples) {
            const sa = Object.fromEntries(smp.attribute_indices.map(attr));
            expect(typeof sa['thread.id'] === 'number' && sa['thread.id'] > 0, 'sample without thread.id');
            expect(typeof sa['thread.name'] === 'string', 'sample without thread.name');
            expect(typeof sa['cpu.logical_number'] === 'number' && sa['cpu.logical_number'] < os.cpus().length,
              `sample without a valid cpu.logical_number (${sa['cpu.logical_number']})`);
            out.threadIds.add(sa['thread.id']);
            out.threadNames.add(sa['thread.name']);
            out.cpus.add(sa['cpu.logical_number']);
            const ts = smp.timestamps_unix_nano.map(BigInt);
            const n = ts.length || smp.values.reduce((a, v) => a + Number(v), 0);
            expect(n > 0, 'sample with neither timestamps nor values');
            if (ts.length && smp.values.length)
              expect(ts.length === smp.values.length, 'timestamps and values differ in length');
            for (const t of ts)
              expect(t >= t0 - 1000000n && t <= t1 + 1000000n,
                `timestamp ${t} outside its profile [${t0}, ${t1}]`);
            out.events += n;
            out.cpuEvents.push({ cpu: sa['cpu.logical_number'], ts });
            const locs = d.stack_table[smp.stack_index].location_indices;
            const names = [], frames = [];
            for (const li of locs) { // leaf first; lines innermost first
              const loc = d.location_table[li];
              const la = Object.fromEntries(loc.attribute_indices.map(attr));
              out.frameTypes.add(la['profile.frame.type']);
              for (const ln of loc.lines) {
                // A frame nothing named goes as mapping + address, no made-up function.
                expect(!/\+0x[0-9a-f]+$/.test(s(d.function_table[ln.function_index].name_strindex)),
                  `a line names ${s(d.function_table[ln.function_index].name_strindex)}`);
                const fn = d.function_table[ln.function_index];
                names.push(s(fn.name_strindex));
                frames.push({ name: s(fn.name_strindex), file: s(fn.filename_strindex),
                              line: Number(ln.line), type: la['profile.frame.type'],
                              mapped: loc.mapping_index !== 0 });
              }
              if (loc.mapping_index) {
                const m = d.mapping_table[loc.mapping_index];
                out.mappings.push({ file: s(m.filename_strindex),
                                    attrs: Object.fromEntries(m.attribute_indices.map(attr)),
                                    type: la['profile.frame.type'] });
              }
            }
            out.stacks.push({ stack: names.reverse(), n, frames });
          }
        }
      }
    }
  }
  return out;
}

function checkOtlp() {
  const p = otlpProcess(args.transport);
  expect(p.requests > 0, `no ${args.transport || 'OTLP'} request arrived`);
  expect(p.profiles.length > 0, `no profile for pid ${pid} in ${p.requests} requests`);
  for (const ra of p.resources) {
    expect(ra['service.name'] === args.service, `service.name is ${ra['service.name']}, not ${args.service}`);
    expect(ra['host.name'] === os.hostname(), `host.name is ${ra['host.name']}, not ${os.hostname()}`);
    expect(ra['process.executable.path'] === args.exe, `process.executable.path is ${ra['process.executable.path']}`);
    expect(ra['process.executable.name'] === args.exe.split('/').pop(), `process.executable.name is ${ra['process.executable.name']}`);
    if (ra['container.id'] !== undefined)
      expect(/^[0-9a-f]{64}$/.test(ra['container.id']), `container.id ${ra['container.id']} is not an id`);
    for (const [k, v] of Object.entries(JSON.parse(args['resource-attrs'] || '{}')))
      expect(ra[k] === v, `resource attribute ${k} is ${ra[k]}, not ${v}`);
  }
  for (const pr of p.profiles) {
    expect(pr.sampleType.join('/') === 'samples/count', `sample type ${pr.sampleType.join('/')}`);
    expect(pr.periodType.join('/') === 'cpu/nanoseconds', `period type ${pr.periodType.join('/')}`);
    expect(pr.period === Math.round(1e9 / hz), `period ${pr.period}, not 1e9/${hz}`);
    expect(pr.idLen === 16, 'profile_id is not 16 bytes');
  }
  for (const t of p.frameTypes)
    expect(FRAME_TYPES.includes(t), `unexpected profile.frame.type ${t}`);
  expect(p.frameTypes.has('native'), 'no native frame');
  const exeMaps = p.mappings.filter((m) => m.file === args.exe);
  expect(exeMaps.length > 0, `no mapping for ${args.exe}`);
  const ids = exeMaps[0].attrs;
  expect(/^[0-9a-f]{40}$/.test(ids['process.executable.build_id.gnu'] || ''),
    `build_id.gnu missing or malformed: ${ids['process.executable.build_id.gnu']}`);
  expect(ids['process.executable.build_id.htlhash'] === htlhash(args.exe),
    `build_id.htlhash ${ids['process.executable.build_id.htlhash']} != ${htlhash(args.exe)}`);
  expect(exeMaps.every((m) => m.type === 'native'), 'the executable\'s frames are not native');
  const py = args['python-script'] ? checkScriptFrames(p, PYTHON)
    : args['v8-script'] ? checkScriptFrames(p, V8JS) : null;
  const c = chainCounts(py ? py.stacks : p.stacks);
  expect(c.leaf >= 10, `only ${c.leaf} events in ${chain[chain.length - 1]}`);
  expect(c.complete * 10 >= c.leaf * 9, `only ${c.complete} of ${c.leaf} leaf events have the whole chain`);
  console.log(`check: OK ${p.requests} requests, ${p.profiles.length} profiles, ${p.events} events ` +
              `(${c.complete}/${c.leaf} with the whole chain), threads ${[...p.threadNames].join(',')}, ` +
              `cpus ${[...p.cpus].sort().join(',')}, frame types ${[...p.frameTypes].sort().join(',')}` +
              (py ? `, ${py.calls} ${py.lang} calls at their line, ${py.leaves} leaf lines, ${py.lineless} frames without a line` : ''));
}

// A runtime's frames: their type, the script's option, how a function of
// the script begins (its body: after that line, up to the next one).
const PYTHON = { lang: 'Python', type: 'cpython', option: 'python-script', def: (n) => `def ${n}(`,
                 next: (l) => l.startsWith('def ') };
const V8JS = { lang: 'JavaScript', type: 'v8js', option: 'v8-script', def: (n) => `function ${n}(`,
               next: (l) => l.startsWith('function ') };

// A CPython (or node) process: its chain's functions come as cpython (v8js)
// frames of the script, without a mapping, each caller at a line of the
// script that calls the next one, the leaf at a line of its own body. Returns
// the stacks of the runtime's frames only (the interpreter's frames between
// them left out) for the chain count, and how many frames' lines were checked.
function checkScriptFrames(p, rt) {
  const script = args[rt.option];
  const text = fs.readFileSync(script, 'utf8').split('\n');
  const leafName = chain[chain.length - 1];
  const def = text.findIndex((l) => l.startsWith(rt.def(leafName)));
  let end = text.findIndex((l, i) => i > def && rt.next(l));
  if (end < 0) end = text.length;
  expect(def >= 0, `no ${rt.def(leafName)} in ${script}`);
  expect(p.frameTypes.has(rt.type), `no ${rt.type} frame`);
  const stacks = [];
  let calls = 0, leaves = 0, named = 0, lineless = 0;
  for (const st of p.stacks) {
    const frames = st.frames.filter((f) => f.type === rt.type); // leaf first
    for (const f of frames) {
      expect(!f.mapped, `${rt.type} frame ${f.name} has a mapping`);
      if (!chain.includes(f.name)) continue;
      expect(f.file === script, `${rt.type} frame ${f.name} in file "${f.file}", not ${script}`);
      named += st.n;
      // Line 0: a frame whose line could not be checked says so (V8 gives
      // no line rather than one of a code object that may have moved).
      if (f.line === 0) { lineless += st.n; continue; }
      expect(f.line > 0 && f.line <= text.length, `${rt.type} frame ${f.name} at line ${f.line}`);
    }
    for (let i = 1; i < frames.length; i++) {
      const caller = frames[i], callee = frames[i - 1];
      if (!chain.includes(caller.name) || !chain.includes(callee.name) || !caller.line) continue;
      const src = text[caller.line - 1];
      expect(src.includes(`${callee.name}(`),
        `${caller.name} at ${script}:${caller.line} ("${src.trim()}") does not call ${callee.name}`);
      calls += st.n;
    }
    if (frames.length && frames[0].name === leafName && frames[0].line) {
      // Python: after its def line; JavaScript: from it (optimized code's
      // entry stack check carries the function's own position).
      const first = rt === V8JS ? def + 1 : def + 2;
      expect(frames[0].line >= first && frames[0].line <= end,
        `${leafName} at line ${frames[0].line}, outside its body (lines ${first}-${end})`);
      leaves += st.n;
    }
    stacks.push({ stack: frames.map((f) => f.name).reverse(), n: st.n });
  }
  expect(calls > 0 && leaves > 0, `no ${rt.lang} frame of the chain (${calls} calls, ${leaves} leaves)`);
  // At most 1 in 50 of the chain's frames without a line; every line given is right.
  expect(lineless * 50 <= named, `${lineless} of ${named} ${rt.type} frames of the chain without a line`);
  return { lang: rt.lang, stacks, calls, leaves, lineless };
}

function checkPyroscope() {
  const pushes = records.filter((r) => r.transport === 'pyroscope');
  expect(pushes.length > 0, 'no Pyroscope push arrived');
  const mine = pushes.filter((r) => r.query.name.startsWith(`${args.service}{`));
  expect(mine.length > 0, `no push named ${args.service}{...}: ${pushes.map((r) => r.query.name).join(' ')}`);
  // Every push passes Pyroscope's ingest rules as its code states them
  // (pyroscope_rules.js, each rule with the file enforcing it); numeric sample
  // labels are dropped too. (pprof-format, which it decodes with, is found
  // through NODE_PATH.)
  const { pyroscopeRefusals } = require('./pyroscope_rules');
  for (const r of pushes) {
    const refusals = pyroscopeRefusals(r.query.name, Buffer.from(r.raw, 'base64'), r.receivedMs);
    expect(refusals.length === 0, `Pyroscope would refuse or alter ${r.query.name}: ${refusals.join('; ')}`);
    expect(USER_AGENT.test(r['user-agent'] || ''), `user-agent ${r['user-agent']}`);
    for (const s of r.profile.samples)
      expect(s.numericLabels.length === 0, `numeric labels ${s.numericLabels} (Pyroscope drops them)`);
  }
  const stacks = [];
  for (const r of mine) {
    const q = r.query;
    expect(q.format === 'pprof', `format=${q.format}`);
    expect(/[{,]service_name=/.test(q.name) && q.name.includes(`service_name=${args.service}`),
      `name ${q.name} lacks service_name=${args.service}`);
    expect(Number(q.from) > 1e9 && Number(q.until) >= Number(q.from), `from=${q.from} until=${q.until}`);
    expect(Number(q.sampleRate) === hz, `sampleRate=${q.sampleRate}`);
    if (args.auth) expect(r.authorization === 'Basic ' + Buffer.from(args.auth).toString('base64'),
      `authorization header ${r.authorization}`);
    const types = r.profile.sampleTypes.map((t) => t.join('/'));
    expect(types.includes('samples/count') && types.includes('cpu/nanoseconds'), `sample types ${types}`);
    for (const s of r.profile.samples)
      if (s.labels.pid === String(pid))
        stacks.push({ stack: [...s.stack].reverse(), n: Number(s.values[0]) });
  }
  const c = chainCounts(stacks);
  expect(c.leaf >= 10, `only ${c.leaf} samples in ${chain[chain.length - 1]} in Pyroscope pushes`);
  expect(c.complete * 10 >= c.leaf * 9, `only ${c.complete} of ${c.leaf} leaf samples have the whole chain`);
  console.log(`check: OK ${mine.length} pushes named ${mine[0].query.name}, ${c.complete}/${c.leaf} samples with the whole chain`);
}

// Events of the process on --cpu N stamped after --after-ns T (wall clock): at least --min-events.
function checkCpuAfter() {
  const p = otlpProcess(args.transport);
  const cpu = Number(args.cpu), after = BigInt(args['after-ns']);
  let n = 0, before = 0;
  for (const e of p.cpuEvents) {
    if (e.cpu !== cpu) continue;
    for (const t of e.ts) (t > after ? n++ : before++);
  }
  console.log(`check: ${n} events on cpu ${cpu} after ${after} (${before} before)`);
  expect(n >= Number(args['min-events'] || 1), `only ${n} events on cpu ${cpu} after ${after}`);
  console.log('check: OK');
}

// Intervals tile time: no profile starts after the previous one ended. A
// window may reach into its neighbour's (never leave a gap): a held stack
// copy unwound an interval later keeps its sample time, and its profile's
// window stretches to cover it (session.c), so windows can overlap.
function checkContinuity() {
  const p = otlpProcess(args.transport);
  expect(p.profiles.length > 0, `no profile for pid ${pid}`);
  const byTime = new Map();
  for (const pr of p.profiles) byTime.set(pr.time, pr); // a retried duplicate counts once
  const list = [...byTime.values()].sort((a, b) => (a.time < b.time ? -1 : 1));
  let gaps = 0, overlaps = 0, reach = 0n;
  let end = list[0].time + list[0].duration;
  for (let i = 1; i < list.length; i++) {
    if (end < list[i].time) {
      console.log(`check: gap between ${end} and ${list[i].time}`);
      gaps++;
    } else if (end > list[i].time) {
      overlaps++;
      if (end - list[i].time > reach) reach = end - list[i].time;
    }
    const e = list[i].time + list[i].duration;
    if (e > end) end = e;
  }
  const span = Number(end - list[0].time) / 1e9;
  expect(gaps === 0, `${gaps} intervals missing`);
  expect(span >= Number(args['min-seconds'] || 0), `profiles cover ${span.toFixed(1)} s only`);
  console.log(`check: OK ${list.length} consecutive intervals over ${span.toFixed(1)} s, no gap` +
              (overlaps ? ` (${overlaps} windows stretched into the next, by up to ${Number(reach) / 1e6} ms)` : ''));
}

// Every index of the dictionary and of the profiles points inside its table.
function checkIndices(req) {
  const d = req.dictionary;
  const inStr = (i, what) => expect(i >= 0 && i < d.string_table.length, `${what} string index ${i} out of range`);
  const inTab = (i, tab, what) => expect(i >= 0 && i < tab.length, `${what} index ${i} out of range (${tab.length})`);
  for (const m of d.mapping_table) {
    inStr(m.filename_strindex, 'mapping filename');
    for (const a of m.attribute_indices) inTab(a, d.attribute_table, 'mapping attribute');
  }
  for (const f of d.function_table) {
    inStr(f.name_strindex, 'function name');
    inStr(f.system_name_strindex, 'function system name');
    inStr(f.filename_strindex, 'function file');
  }
  for (const l of d.location_table) {
    inTab(l.mapping_index, d.mapping_table, 'location mapping');
    for (const a of l.attribute_indices) inTab(a, d.attribute_table, 'location attribute');
    for (const ln of l.lines) expect(ln.function_index > 0 && ln.function_index < d.function_table.length,
      `line function index ${ln.function_index} out of range`);
  }
  for (const st of d.stack_table)
    for (const li of st.location_indices)
      expect(li > 0 && li < d.location_table.length, `stack location index ${li} out of range`);
  for (const a of d.attribute_table.slice(1)) inStr(a.key_strindex, 'attribute key');
  for (const rp of req.resource_profiles)
    for (const sp of rp.scope_profiles)
      for (const prof of sp.profiles) {
        for (const vt of [prof.sample_type, prof.period_type]) {
          inStr(vt.type_strindex, 'value type');
          inStr(vt.unit_strindex, 'value unit');
        }
        for (const smp of prof.samples) {
          expect(smp.stack_index > 0 && smp.stack_index < d.stack_table.length,
            `sample stack index ${smp.stack_index} out of range`);
          for (const a of smp.attribute_indices) inTab(a, d.attribute_table, 'sample attribute');
        }
      }
}

// The functions of a sample's stack, root first, through the request's dictionary.
function stackNames(d, smp) {
  const names = [];
  for (const li of d.stack_table[smp.stack_index].location_indices)
    for (const ln of d.location_table[li].lines)
      names.push(d.string_table[d.function_table[ln.function_index].name_strindex]);
  return names.reverse();
}

// `agent --off-cpu`: each OTLP request carries the interval's CPU and
// off-CPU profiles side by side (one resource per process, one profile per
// type, both of the same interval) over one valid dictionary; at least one
// request has --cpu-pid's CPU samples in --cpu-chain and --pid's off-CPU
// time in --chain, both resolved through that shared dictionary.
function checkOffCpuSet() {
  const cpuPid = Number(args['cpu-pid']);
  const cpuChain = args['cpu-chain'].split(',');
  const has = (stack, want) => stack.join(';').includes(want.join(';'));
  let requests = 0, mixed = 0, both = 0, offNs = 0, cpuSamples = 0;
  for (const r of records) {
    if (r.transport !== 'grpc' && r.transport !== 'http') continue;
    requests++;
    const d = r.request.dictionary;
    checkDictionary(d);
    checkIndices(r.request);
    const s = (i) => d.string_table[i];
    const pids = new Set(), types = new Set(), cpuWins = [], offWins = [];
    let cpuHere = 0, offHere = 0;
    for (const rp of r.request.resource_profiles) {
      const ra = Object.fromEntries(rp.resource.attributes.map((kv) => [kv.key, attrValue(kv.value)]));
      expect(!pids.has(ra['process.pid']), `pid ${ra['process.pid']} has two resources in one request`);
      pids.add(ra['process.pid']);
      expect(rp.scope_profiles.length === 1, `${rp.scope_profiles.length} scopes for one process`);
      const mine = new Set();
      for (const prof of rp.scope_profiles[0].profiles) {
        const st = `${s(prof.sample_type.type_strindex)}/${s(prof.sample_type.unit_strindex)}`;
        const pt = `${s(prof.period_type.type_strindex)}/${s(prof.period_type.unit_strindex)}`;
        expect((st === 'samples/count' && pt === 'cpu/nanoseconds') ||
               (st === 'off_cpu/nanoseconds' && pt === 'off_cpu/nanoseconds'),
          `profile of sample type ${st}, period type ${pt}`);
        expect(!mine.has(st), `two ${st} profiles for pid ${ra['process.pid']}`);
        mine.add(st);
        types.add(st);
        const t0 = BigInt(prof.time_unix_nano), t1 = t0 + BigInt(prof.duration_nano);
        (st === 'samples/count' ? cpuWins : offWins).push([t0, t1]);
        for (const smp of prof.samples) {
          const names = stackNames(d, smp);
          const v = smp.values.reduce((a, x) => a + Number(x), 0) + smp.timestamps_unix_nano.length;
          if (st === 'samples/count' && ra['process.pid'] === cpuPid && has(names, cpuChain)) cpuHere += v;
          if (st === 'off_cpu/nanoseconds' && ra['process.pid'] === pid && has(names, chain)) offHere += v;
        }
      }
    }
    // One interval per request: the off-CPU window (from the attach, on the first
    // interval) lies inside the CPU one, and all CPU profiles share one window.
    for (const w of cpuWins)
      expect(w[0] === cpuWins[0][0] && w[1] === cpuWins[0][1], 'CPU profiles of different intervals in one request');
    for (const w of offWins)
      expect(!cpuWins.length || (w[0] >= cpuWins[0][0] && w[1] <= cpuWins[0][1]),
        `an off-CPU window [${w}] outside the CPU one [${cpuWins[0]}]`);
    if (types.size === 2) mixed++;
    if (cpuHere && offHere) both++;
    cpuSamples += cpuHere;
    offNs += offHere;
  }
  expect(requests > 0, 'no OTLP request arrived');
  expect(both > 0, `no request with both ${cpuChain.join(';')} on CPU and ${chain.join(';')} off CPU ` +
                   `(${requests} requests, ${mixed} with both types)`);
  console.log(`check: OK ${requests} requests, ${mixed} with both profile types, ${both} with both chains ` +
              `(${cpuSamples} CPU samples, ${(offNs / 1e9).toFixed(3)} s off CPU)`);
}

({ otlp: checkOtlp, pyroscope: checkPyroscope, continuity: checkContinuity,
   "cpu-after": checkCpuAfter, "offcpu-set": checkOffCpuSet })[args.mode]();
