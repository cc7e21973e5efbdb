#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Judges what tests/e2e/test_fleet.c collected, with independent parsers.

  fleet_check.py metrics FILE [record]  a /metrics scrape, parsed with the
                                 official Prometheus client's text parser (record:
                                 a recording's page, without export queues)
  fleet_check.py jsonlog FILE    every line of an agent log is one JSON object
                                 with time (UTC, ms), level and msg
  fleet_check.py daemonset FILE FOOTPRINT_BYTES  (RSS + BPF map memory measured)
                                 the Kubernetes manifest's structure (PyYAML)

Prints "fleet_check: OK ..." or "fleet_check: FAIL: ..." (exit 1).
"""
import json
import re
import sys


def fail(msg):
    print(f"fleet_check: FAIL: {msg}")
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def metrics(path, record=False):
    from prometheus_client.parser import text_string_to_metric_families

    text = open(path, encoding="utf-8").read()
    fams = {}
    for fam in text_string_to_metric_families(text):
        fams[fam.name] = fam
    # The client strips _total from counter family names.
    def samples(name):
        for fam in fams.values():
            for s in fam.samples:
                if s.name == name:
                    yield s

    def value(name, **labels):
        for s in samples(name):
            if all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
        fail(f"no sample {name} {labels}")

    need_counters = ["omniprof_samples", "omniprof_bpf_program_runs", "omniprof_samples_dropped",
                     "omniprof_samples_truncated"]
    if not record:
        need_counters += ["omniprof_export_sent", "omniprof_export_send_failures",
                          "omniprof_export_dropped"]
    for n in need_counters:
        expect(n in fams and fams[n].type == "counter", f"{n} is not a counter family")
    for n in ["omniprof_processes_tracked", "omniprof_files_tracked", "omniprof_symbol_cache_bytes",
              "process_resident_memory_bytes"] + ([] if record else ["omniprof_export_queue_depth"]):
        expect(n in fams and fams[n].type == "gauge", f"{n} is not a gauge family")
    expect(value("omniprof_samples_total") > 0, "no samples counted")
    expect(value("omniprof_bpf_program_runs_total") >= value("omniprof_samples_total"),
           "fewer BPF runs than samples")
    reasons = {s.labels["reason"] for s in samples("omniprof_samples_truncated_total")}
    expect({"bad_frame_pointer", "no_unwind_rule", "user_stack_unreadable"} <= reasons,
           f"truncation reasons {sorted(reasons)}")
    reasons = {s.labels["reason"] for s in samples("omniprof_samples_dropped_total")}
    expect("ring_buffer_full" in reasons, f"drop reasons {sorted(reasons)}")
    expect(value("omniprof_processes_tracked") >= 1, "no process tracked")
    expect(value("omniprof_files_tracked") >= 1, "no file tracked")
    expect(value("omniprof_bpf_maps") >= 5 and value("omniprof_bpf_map_bytes") > (1 << 20),
           f"BPF maps {value('omniprof_bpf_maps')}, {value('omniprof_bpf_map_bytes')} bytes")
    if record:
        expect(not any(n.startswith("omniprof_export") for n in fams), "a recording has no queues")
    else:
        expect(value("omniprof_export_sent_total", destination="otlp") >= 1,
               "nothing sent over OTLP")
        expect(value("omniprof_export_queue_depth", destination="otlp") >= 0, "no queue depth")
    rss = value("process_resident_memory_bytes")
    expect(rss > (1 << 20), f"RSS {rss}")
    print(f"fleet_check: OK metrics: {len(fams)} families, "
          f"{int(value('omniprof_samples_total'))} samples, RSS {rss / 1048576:.1f} MiB, "
          f"BPF maps {value('omniprof_bpf_map_bytes') / 1048576:.1f} MiB in {int(value('omniprof_bpf_maps'))}")
    # BPF map memory is charged to the memory cgroup (Linux 5.11+): a pod's limit covers both.
    if not record:  # the DaemonSet is sized for the agent
        print(f"footprint_bytes {int(rss + value('omniprof_bpf_map_bytes'))}")


def jsonlog(path):
    n = 0
    levels = set()
    for line in open(path, encoding="utf-8"):
        n += 1
        try:
            obj = json.loads(line)
        except ValueError as e:
            fail(f"line {n} is not JSON ({e}): {line!r}")
        expect(isinstance(obj, dict) and set(obj) == {"time", "level", "msg"},
               f"line {n} keys {list(obj)}")
        expect(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", obj["time"]),
               f"line {n} time {obj['time']}")
        expect(obj["level"] in ("error", "warn", "info", "debug"), f"line {n} level {obj['level']}")
        levels.add(obj["level"])
    expect(n >= 2, f"only {n} lines")
    print(f"fleet_check: OK jsonlog: {n} lines, levels {sorted(levels)}")


def mib(q):
    m = re.fullmatch(r"(\d+)(Mi|Gi)", q)
    expect(m, f"memory quantity {q} is not NNMi/NNGi")
    return int(m.group(1)) * (1 if m.group(2) == "Mi" else 1024)


def daemonset(path, footprint):
    import yaml

    docs = [d for d in yaml.safe_load_all(open(path, encoding="utf-8")) if d]
    expect(len(docs) == 1, f"{len(docs)} documents")
    ds = docs[0]
    expect(ds.get("apiVersion") == "apps/v1" and ds.get("kind") == "DaemonSet", "not an apps/v1 DaemonSet")
    spec = ds["spec"]
    tmpl = spec["template"]
    expect(spec["selector"]["matchLabels"].items() <= tmpl["metadata"]["labels"].items(),
           "the selector does not select the pods")
    pod = tmpl["spec"]
    expect(pod.get("hostPID") is True, "no hostPID")
    expect(pod.get("automountServiceAccountToken") is False, "a service account token is mounted")
    cs = pod["containers"]
    expect(len(cs) == 1, "not one container")
    c = cs[0]
    sc = c["securityContext"]
    expect(sc.get("privileged") is True, "not privileged")
    expect(sc.get("readOnlyRootFilesystem") is True, "root file system writable")
    expect(c["args"][0] == "agent", "does not run the agent")
    env = {e["name"]: e for e in c.get("env", [])}
    expect("OTEL_EXPORTER_OTLP_ENDPOINT" in env, "no OTLP endpoint in the environment")
    res = c["resources"]
    lim, req = mib(res["limits"]["memory"]), mib(res["requests"]["memory"])
    used = footprint / 1048576
    expect(req <= lim, "memory request above its limit")
    expect(lim >= 2 * used, f"memory limit {lim} MiB is under twice the measured RSS + BPF maps {used:.1f} MiB")
    expect(req >= used, f"memory request {req} MiB is under the measured RSS + BPF maps {used:.1f} MiB")
    port = {p["name"]: p["containerPort"] for p in c["ports"]}["metrics"]
    expect(f"0.0.0.0:{port}" in c["args"], "--metrics-listen does not serve the declared port")
    vols = {v["name"] for v in pod.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        expect(m["name"] in vols, f"mount {m['name']} has no volume")
    print(f"fleet_check: OK daemonset: limit {lim} MiB, request {req} MiB, measured RSS + BPF maps {used:.1f} MiB")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "metrics":
        metrics(sys.argv[2], len(sys.argv) > 3 and sys.argv[3] == "record")
    elif mode == "jsonlog":
        jsonlog(sys.argv[2])
    elif mode == "daemonset":
        daemonset(sys.argv[2], float(sys.argv[3]))
    else:
        fail(f"unknown mode {mode}")
