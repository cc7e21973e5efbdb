// SPDX-License-Identifier: Apache-2.0
//
// What Grafana Pyroscope's ingest path refuses, drops or alters in a push to
// /ingest?name=SERVICE{k=v,...}&format=pprof, as its code states it (read at
// grafana/pyroscope 3fe6a457a32004efc46da819cbc114472d07415e, August 2026;
// the rules are restated here, none of its code is). Each rule cites the file
// that enforces it. Defaults are the server's own (pkg/validation/limits.go);
// a rule that silently alters data (a label dropped, a stack or a symbol
// truncated) counts as a refusal: the push would not arrive as sent.
//
//   pyroscopeRefusals(nameParam, rawPprof, receivedMs) -> [reason, ...]
'use strict';
const { Profile } = require('pprof-format');

// pkg/validation/limits.go: the flags' defaults.
const LIMITS = {
  maxLabelNameLength: 1024, // validation.max-length-label-name
  maxLabelValueLength: 2048, // validation.max-length-label-value
  maxLabelNamesPerSeries: 30, // validation.max-label-names-per-series
  maxProfileSizeBytes: 4 * 1024 * 1024, // validation.max-profile-size-bytes (uncompressed)
  maxSamples: 16000, // validation.max-profile-stacktrace-samples
  maxSampleLabels: 100, // validation.max-profile-stacktrace-sample-labels
  maxDepth: 1000, // validation.max-profile-stacktrace-depth (truncates)
  maxSymbolLength: 65535, // validation.max-profile-symbol-value-length (truncates)
  rejectOlderThanMs: 3600e3, // validation.reject-older-than: 1h
  rejectNewerThanMs: 600e3, // validation.reject-newer-than: 10m
};

// api/model/labelset/validate.go: IsLabelNameRuneAllowed, IsServiceNameRuneAllowed.
const labelNameRune = (c) => /[a-zA-Z0-9_.]/.test(c);
const serviceNameRune = (c) => c === '-' || c === '.' || c === '/' || labelNameRune(c);

// The string table's entries as bytes (field 6 of Profile), for the UTF-8 rule:
// a decoder that replaces bad bytes would hide them.
function rawStrings(buf) {
  const out = [];
  let i = 0;
  const varint = () => {
    let v = 0n, shift = 0n, b;
    do {
      b = buf[i++];
      v |= BigInt(b & 0x7f) << shift;
      shift += 7n;
    } while (b & 0x80);
    return v;
  };
  while (i < buf.length) {
    const key = Number(varint()), field = key >> 3, wire = key & 7;
    if (wire === 0) varint();
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else if (wire === 2) {
      const n = Number(varint());
      if (field === 6) out.push(buf.subarray(i, i + n));
      i += n;
    } else throw new Error(`wire type ${wire} in Profile`);
  }
  return out;
}

function pyroscopeRefusals(name, raw, receivedMs) {
  const why = [];
  const refuse = (msg) => why.push(msg);

  // api/model/labelset/labelset.go Parse: the service name is the text before the
  // first '{' (trimmed), validated by validate.go ValidateServiceName; then
  // KEY=VALUE pairs split at ',' and ended by '}', keys and values trimmed, with
  // no escaping: a value holding ',' or '}' or outer spaces would be cut or
  // altered, and text after the closing '}' is ignored.
  const m = /^([^{]*)\{([^}]*)\}$/.exec(name);
  if (!m) return [`name ${name} is not SERVICE{k=v,...} with one closing '}' at its end`];
  const service = m[1];
  if (service !== service.trim() || service === '')
    refuse(`service name '${service}' is empty or has outer spaces (labelset.go)`);
  for (const c of service)
    if (!serviceNameRune(c)) refuse(`service name '${service}': character ${JSON.stringify(c)} is not allowed (validate.go)`);
  const labels = new Map();
  for (const kv of m[2] === '' ? [] : m[2].split(',')) {
    const eq = kv.indexOf('=');
    if (eq < 0) { refuse(`label '${kv}' has no '=' (labelset.go)`); continue; }
    const k = kv.slice(0, eq), v = kv.slice(eq + 1);
    if (k !== k.trim() || v !== v.trim()) refuse(`label ${kv}: outer spaces are trimmed (labelset.go)`);
    // validate.go ValidateLabelName: non-empty, [a-zA-Z0-9_.] only, __name__ reserved.
    if (k === '' || [...k].some((c) => !labelNameRune(c)))
      refuse(`label name '${k}' has characters Pyroscope refuses (validate.go)`);
    if (k === '__name__') refuse('label __name__ is reserved for the service (validate.go)');
    // pkg/model/labels.go IsLabelAllowedForIngestion (used by
    // pkg/og/convert/pprof/profile.go createLabels): '__' labels other than
    // __session_id__ are dropped.
    if (k.startsWith('__') && k !== '__session_id__') refuse(`label ${k} is dropped on ingest (pkg/model/labels.go)`);
    // api/model/labelset/labelset.go HasProfileID: a push with profile_id is
    // ignored by pkg/ingester/pyroscope/ingest_adapter.go Put.
    if (k === 'profile_id' && v !== '') refuse('a profile_id label makes Pyroscope ignore the push (ingest_adapter.go)');
    // labelset.go keeps the last of duplicate keys (a map): the others are lost;
    // pkg/validation/validate.go ValidateLabels refuses duplicate names.
    if (labels.has(k)) refuse(`label ${k} given twice (validate.go DuplicateLabelNames)`);
    labels.set(k, v);
  }
  // pkg/og/convert/pprof/profile.go createLabels: the series is __name__ (the
  // profile type), __delta__, pyroscope_spy, service_name (from the service
  // when no service_name label is given) and the allowed labels; then
  // pkg/validation/validate.go ValidateLabels checks it against limits.go.
  const series = new Map([['__name__', 'process_cpu'], ['__delta__', 'false'], ['pyroscope_spy', '']]);
  if (!labels.has('service_name')) series.set('service_name', service);
  for (const [k, v] of labels) if (!k.startsWith('__') || k === '__session_id__') series.set(k, v);
  if (series.size > LIMITS.maxLabelNamesPerSeries)
    refuse(`${series.size} label names in the series; limit ${LIMITS.maxLabelNamesPerSeries} (validate.go)`);
  // validate.go isValidServiceName: service_name must not be empty.
  if (!series.get('service_name')) refuse('empty service_name (validate.go)');
  for (const [k, v] of series) {
    if (Buffer.byteLength(k) > LIMITS.maxLabelNameLength) refuse(`label name ${k} too long (validate.go)`);
    if (Buffer.byteLength(v) > LIMITS.maxLabelValueLength) refuse(`label ${k} value too long (validate.go)`);
  }

  // pkg/validation/validate.go ValidateProfile (and validateStringTableAccess).
  if (raw.length > LIMITS.maxProfileSizeBytes)
    refuse(`profile of ${raw.length} bytes uncompressed; limit ${LIMITS.maxProfileSizeBytes} (validate.go)`);
  const strings = rawStrings(raw);
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  strings.forEach((s, i) => {
    try { utf8.decode(s); } catch (e) { refuse(`string ${i} is not valid UTF-8 (validate.go)`); }
    // Truncated (kept from the end), not refused: the name would arrive altered.
    if (s.length > LIMITS.maxSymbolLength) refuse(`string ${i} longer than ${LIMITS.maxSymbolLength} bytes (validate.go)`);
  });
  if (strings.length === 0 || strings[0].length !== 0) refuse('string 0 is not empty (validate.go)');
  const p = Profile.decode(raw);
  const n = strings.length;
  const inRange = (x) => Number(x) >= 0 && Number(x) < n;
  if (p.sampleType.length === 0) refuse('no sample type (validate.go: empty profile)');
  for (const t of p.sampleType) {
    if (!inRange(t.type)) refuse('sample type string index out of range (validate.go)');
    else if (p.stringTable.strings[Number(t.type)].includes('-')) refuse('sample type contains - (validate.go)');
  }
  const t = Number(p.timeNanos) / 1e6;
  if (t > 0 && !(t > receivedMs - LIMITS.rejectOlderThanMs && t < receivedMs + LIMITS.rejectNewerThanMs))
    refuse(`time_nanos ${p.timeNanos} outside the ingestion window around ${receivedMs} ms (validate.go)`);
  if (p.sample.length > LIMITS.maxSamples) refuse(`${p.sample.length} samples; limit ${LIMITS.maxSamples} (validate.go)`);
  for (const s of p.sample) {
    if (s.locationId.length > LIMITS.maxDepth) refuse(`stack of ${s.locationId.length} frames is truncated to ${LIMITS.maxDepth} (validate.go)`);
    if (s.label.length > LIMITS.maxSampleLabels) refuse(`sample with ${s.label.length} labels; limit ${LIMITS.maxSampleLabels} (validate.go)`);
    if (s.value.length !== p.sampleType.length) refuse('sample value length mismatch (validate.go)');
    for (const l of s.label)
      if (!inRange(l.key) || !inRange(l.str)) refuse('sample label string index out of range (validate.go)');
  }
  for (const l of p.location) if (Number(l.id) === 0) refuse('location id is 0 (validate.go)');
  for (const f of p.function) {
    if (Number(f.id) === 0) refuse('function id is 0 (validate.go)');
    if (!inRange(f.name) || !inRange(f.systemName) || !inRange(f.filename))
      refuse(`function ${f.id}: string index out of range (validate.go)`);
  }
  for (const mp of p.mapping)
    if (!inRange(mp.filename) || !inRange(mp.buildId)) refuse(`mapping ${mp.id}: string index out of range (validate.go)`);
  return [...new Set(why)];
}

module.exports = { pyroscopeRefusals, LIMITS };
