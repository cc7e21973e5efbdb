# SPDX-License-Identifier: Apache-2.0
"""Shared pieces of the omniprof benchmarks: starting workloads, reading a
process's CPU time and peak memory, BPF program run time and map memory from
/proc/PID/fdinfo, and medians. Python 3 standard library only."""

import http.server
import json
import os
import re
import signal
import statistics
import subprocess
import threading
import time

BPF_PROG_TYPE_PERF_EVENT = 7


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, spec="{:.1f}", none="n/a"):
    return none if value is None else spec.format(value)


class Child:
    """A process we start and later reap with wait4, so its own user + system
    CPU time and peak RSS come from the kernel's accounting (rusage)."""

    def __init__(self, argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=None):
        self.argv = argv
        self.start = time.monotonic()
        self.proc = subprocess.Popen(argv, stdout=stdout, stderr=stderr, env=env,
                                     start_new_session=True)
        self.pid = self.proc.pid
        self.rusage = None
        self.status = None
        self.wall = None

    def wait_line(self, text, timeout=20):
        """Reads stdout lines until one equals text (the workloads' "ready")."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                return False
            if line.decode(errors="replace").strip() == text:
                return True
        return False

    def signal(self, sig=signal.SIGTERM):
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def wait(self, timeout=None):
        """Reaps the child: returns (exit status, user+sys seconds, peak RSS KiB)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            pid, status, ru = os.wait4(self.pid, os.WNOHANG)
            if pid:
                break
            if deadline is not None and time.monotonic() > deadline:
                self.signal(signal.SIGKILL)
                deadline = None
            time.sleep(0.02)
        self.wall = time.monotonic() - self.start
        self.status = os.waitstatus_to_exitcode(status)
        self.rusage = ru
        self.proc.returncode = self.status
        return self.status

    @property
    def cpu_s(self):
        return self.rusage.ru_utime + self.rusage.ru_stime

    @property
    def maxrss_mib(self):
        return self.rusage.ru_maxrss / 1024.0


def proc_cpu_s(pid):
    """User + system CPU seconds pid has used so far (/proc/PID/stat), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_parts(pid):
    """pid's resident memory now, in KiB, by kind (/proc/PID/smaps): "ring" (the
    BPF ring buffer's mapping: kernel memory, all of it resident; mapped once
    since session 17, util/bpf_ring.c, twice by libbpf before),
    "code" (the binary and shared libraries), "heap" (malloc's heap and anonymous
    mappings: big allocations, thread arenas and stacks), "files" (other mapped
    files: the ELF files being read), "other". None when unreadable."""
    try:
        with open(f"/proc/{pid}/smaps", errors="replace") as f:  # paths are any bytes
            lines = f.read().splitlines()
    except OSError:
        return None

    def head(line):
        first = line.split(None, 1)[0] if line.strip() else ""
        return "-" in first and all(c in "0123456789abcdef-" for c in first)

    heads = [line.split(None, 5) for line in lines if head(line)]
    # Code: the files mapped executable (all their segments); the ELF files the
    # profiler reads are mapped read-only.
    code = {h[5].strip() for h in heads if len(h) > 5 and "x" in h[1]}
    parts = {"ring": 0, "code": 0, "heap": 0, "files": 0, "other": 0}
    kind = "other"
    for line in lines:
        if head(line):
            fields = line.split(None, 5)
            name = fields[5].strip() if len(fields) > 5 else ""
            if name.startswith("anon_inode:bpf"):
                kind = "ring"
            elif name in ("", "[heap]") or name.startswith("[stack"):
                kind = "heap"
            elif name in code:
                kind = "code"
            elif name.startswith("/"):
                kind = "files"
            else:
                kind = "other"
        elif line.startswith("Rss:"):
            parts[kind] += int(line.split()[1])
    return parts


def alive(pid):
    """True while pid runs (not yet a zombie); does not reap it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def first_prog_run(pid, since, timeout=30, step=0.005):
    """Seconds from since (time.monotonic()) until pid's perf_event program has
    run once (its first sample: the events are enabled when start-up is done),
    polled every step; None past timeout or when pid ends first.
    Needs kernel.bpf_stats_enabled=1."""
    while time.monotonic() - since < timeout and alive(pid):
        st = sampler_prog_stats(pid)
        if st and st[1] > 0:
            return time.monotonic() - since
        time.sleep(step)
    return None
def proc_run_s(pid):
    """CPU seconds pid's live threads have run so far (/proc/PID/task/*/schedstat:
    nanoseconds, where /proc/PID/stat counts 10 ms ticks), or None."""
    total, seen = 0, False
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                total += int(f.read().split()[0])
                seen = True
        except (OSError, ValueError, IndexError):
            pass
    return total / 1e9 if seen else None


def fdinfo(pid):
    """Yields (fd, dict) for every BPF program or map fd that pid holds."""
    base = f"/proc/{pid}/fdinfo"
    try:
        fds = os.listdir(base)
    except OSError:
        return
    for fd in fds:
        try:
            with open(f"{base}/{fd}") as f:
                text = f.read()
        except OSError:
            continue
        if "prog_type:" not in text and "map_type:" not in text:
            continue
        info = {}
        for line in text.splitlines():
            key, _, value = line.partition(":")
            info[key.strip()] = value.strip()
        yield fd, info


def sampler_prog_stats(pid):
    """(run_time_ns, run_cnt) of the perf_event program pid loaded, or None.
    Needs kernel.bpf_stats_enabled=1."""
    for _, info in fdinfo(pid):
        if info.get("prog_type") == str(BPF_PROG_TYPE_PERF_EVENT) and "run_cnt" in info:
            return int(info.get("run_time_ns", 0)), int(info["run_cnt"])
    return None


def bpf_map_memory(pid):
    """Bytes of kernel memory in the BPF maps pid holds (fdinfo memlock: the
    kernel's own usage estimate per map), and the map count."""
    total, seen = 0, set()
    for _, info in fdinfo(pid):
        if "map_type" in info and info.get("map_id") not in seen:
            seen.add(info.get("map_id"))
            total += int(info.get("memlock", 0))
    return total, len(seen)


def named_prog_stats(pid, name):
    """(run_time_ns, run_cnt) of pid's BPF program called name (bpftool's name), or None.
    Needs kernel.bpf_stats_enabled=1."""
    for _, info in fdinfo(pid):
        if "prog_id" not in info:
            continue
        r = subprocess.run(["bpftool", "-j", "prog", "show", "id", info["prog_id"]],
                           capture_output=True, text=True)
        if r.returncode:
            continue
        prog = json.loads(r.stdout)
        if prog.get("name") == name:
            return int(prog.get("run_time_ns", 0)), int(prog.get("run_cnt", 0))
    return None


class BpfStats:
    """Turns kernel.bpf_stats_enabled on for the duration, restoring it after."""

    PATH = "/proc/sys/kernel/bpf_stats_enabled"

    def __enter__(self):
        with open(self.PATH) as f:
            self.old = f.read().strip()
        with open(self.PATH, "w") as f:
            f.write("1")
        return self

    def __exit__(self, *exc):
        with open(self.PATH, "w") as f:
            f.write(self.old)


BPF_MAP_TYPE_PERCPU_ARRAY = 6
# enum op_stat in bpf/include/omniprof/abi.h
OP_STAT_SAMPLES, OP_STAT_IDLE, OP_STAT_FILTERED = 0, 1, 2


def op_stat_index(name):
    """Index of counter name in enum op_stat, read from bpf/include/omniprof/abi.h (so a
    counter added before it does not shift what the bench reads)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "bpf", "include", "omniprof", "abi.h")
    with open(path) as f:
        body = f.read().split("enum op_stat {", 1)[1].split("};", 1)[0]
    names = re.findall(r"^\s*(OP_STAT_\w+)", body, re.M)
    return names.index(name)


# The off-CPU counters: switch-outs of user threads seen, and recorded.
OP_STAT_OFFCPU_SWITCHES = op_stat_index("OP_STAT_OFFCPU_SWITCHES")
OP_STAT_OFFCPU_SAMPLED = op_stat_index("OP_STAT_OFFCPU_SAMPLED")


def stats_map_id(pid):
    """Id of the sampler's per-CPU counter map (named "stats") that pid holds."""
    for _, info in fdinfo(pid):
        if info.get("map_type") != str(BPF_MAP_TYPE_PERCPU_ARRAY):
            continue
        r = subprocess.run(["bpftool", "-j", "map", "show", "id", info["map_id"]],
                           capture_output=True, text=True)
        if r.returncode == 0 and json.loads(r.stdout).get("name") == "stats":
            return info["map_id"]
    return None


def read_counters(map_id):
    """The sampler's counters summed over CPUs, indexed by enum op_stat."""
    return read_counters_of([map_id])[0]


def read_counters_of(map_ids):
    """read_counters for several maps, their bpftool dumps run at once (None where
    one is not readable): read in the same moment, not one after another."""
    procs = [subprocess.Popen(["bpftool", "-j", "map", "dump", "id", str(m)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) if m is not None else None
             for m in map_ids]
    outs = []
    for p in procs:
        if p is None:
            outs.append(None)
            continue
        text = p.communicate()[0]
        outs.append(counters_from_dump(text) if p.returncode == 0 else None)
    return outs


def counters_from_dump(text):
    """The counters of one `bpftool -j map dump` of the stats map, summed over CPUs."""
    out = {}
    for entry in json.loads(text):
        f = entry.get("formatted", {})
        out[f.get("key")] = sum(v["value"] for v in f.get("values", []))
    return out


def walked_samples(counters):
    """Program runs that walked a stack: not idle, not another process."""
    return counters.get(OP_STAT_SAMPLES, 0) - counters.get(OP_STAT_IDLE, 0) - \
        counters.get(OP_STAT_FILTERED, 0)


def ns_per_sample_series(pid, seconds, interval=0.5):
    """BPF run time per sample that walked a stack, over successive intervals
    while pid profiles. Runs for other processes (filtered early) are cheap
    but counted in the run time, which makes this an upper bound."""
    return ns_per_sample_series_of([pid], seconds, interval)[0]


def ns_per_sample_series_of(pids, seconds, interval=0.5):
    """ns_per_sample_series for several profilers running at once (one series
    per pid, read in the same intervals): side by side, so the load of the
    machine weighs on each alike."""
    map_ids = [stats_map_id(pid) for pid in pids]

    def snaps():
        # Every agent's program time, then all their counters in one go: the
        # same moment for each (dumps one after another drift apart on a busy host).
        progs = [sampler_prog_stats(p) if m is not None else None for p, m in zip(pids, map_ids)]
        ctrs = read_counters_of(map_ids)
        return [None if prog is None or ctr is None else (prog[0], walked_samples(ctr))
                for prog, ctr in zip(progs, ctrs)]

    series = [[] for _ in pids]
    last = snaps()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(interval)
        nows = snaps()
        for i in range(len(pids)):
            now = nows[i]
            if now is not None and last[i] is not None and now[1] > last[i][1]:
                series[i].append((now[0] - last[i][0]) / (now[1] - last[i][1]))
            last[i] = now
    return series


def named_map_id(pid, name):
    """Id of the map called name (bpftool's name) that pid holds, or None."""
    for _, info in fdinfo(pid):
        if "map_id" not in info:
            continue
        r = subprocess.run(["bpftool", "-j", "map", "show", "id", info["map_id"]],
                           capture_output=True, text=True)
        if r.returncode == 0 and json.loads(r.stdout).get("name") == name:
            return info["map_id"]
    return None


def jvm_stat_index(name):
    """Index of counter name in enum op_jvm_stat (omniprof/interp/hotspot_abi.h)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "bpf", "include", "omniprof", "interp", "hotspot_abi.h")
    with open(path) as f:
        body = f.read().split("enum op_jvm_stat {", 1)[1].split("};", 1)[0]
    return re.findall(r"^\s*(OP_JVM_STAT_\w+)", body, re.M).index(name)


def wait_for_prog(pid, timeout=30):
    """Waits until pid has loaded its sampler program."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if sampler_prog_stats(pid) is not None:
            return True
        time.sleep(0.05)
    return False


def machine_description():
    def read(path):
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            return ""

    model = re.search(r"model name\s*:\s*(.*)", read("/proc/cpuinfo"))
    mem = re.search(r"MemTotal:\s*(\d+)", read("/proc/meminfo"))
    virt = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True) \
        if os.path.exists("/usr/bin/systemd-detect-virt") else None
    os_name = re.search(r'PRETTY_NAME="([^"]*)"', read("/etc/os-release"))
    load = read("/proc/loadavg").split()[:3]
    return {
        "cpu": model.group(1) if model else "?",
        "cpus": os.cpu_count(),
        "mem_gib": int(mem.group(1)) / 1024 / 1024 if mem else 0,
        "kernel": os.uname().release,
        "os": os_name.group(1) if os_name else "?",
        "virt": virt.stdout.strip() if virt and virt.stdout.strip() else "unknown",
        "load": " ".join(load),
    }


class OtlpHttpSink:
    """A local OTLP/HTTP receiver for the agent's exports: answers every POST
    with 200 and an empty body and counts the requests and bytes, so the
    agent's whole reporting path (profile building, encoding, gzip, HTTP) is
    part of its measured cost while nothing is parsed here."""

    def __init__(self):
        sink = self
        self.requests = 0
        self.bytes = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(n)
                sink.requests += 1
                sink.bytes += len(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
