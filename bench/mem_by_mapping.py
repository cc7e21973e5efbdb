#!/usr/bin/env python3
"""Where a whole-system agent's or record's RSS peak comes from, by mapping (issue 22).

    bench/mem_by_mapping.py agent|record SECONDS OMNIPROF[,EXTRA,ARGS] ...

Starts the bench's busy workloads (the native chain and the Python loop) and a
compiler loop (`gcc -O2 -c src/unwind/eh_frame.c`: a new cc1 every few
seconds), then each omniprof given side by side (`agent -F 20 --interval 5` to
its own local OTLP/HTTP receiver, or `record -d SECONDS -F 20`; arguments after
a comma are appended). Every 0.2 s it reads /proc/PID/smaps and keeps the
largest total; at the end it prints, per omniprof, the kernel's high-water
(rusage), its CPU and that largest sample split by mapping name (the BPF ring
is `anon_inode:bpf-map`, table builds and thread arenas `[anon]`). stderr of
each goes to OUT/MODE-N.err (OUT: $OUT or out/ under the repository). Needs
root and a build (`make tests bench-tools`).
"""
import collections
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import benchlib as bl  # noqa: E402


def by_mapping(pid):
    """pid's resident KiB by mapping name now, or None when unreadable."""
    try:
        with open(f"/proc/{pid}/smaps", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    out = collections.Counter()
    name = None
    for line in lines:
        f = line.split(None, 5)
        if f and "-" in f[0] and all(c in "0123456789abcdef-" for c in f[0]):
            name = (f[5].strip() if len(f) > 5 else "") or "[anon]"
        elif line.startswith("Rss:"):
            out[name] += int(line.split()[1])
    return out


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("agent", "record"):
        sys.exit(__doc__)
    mode, secs, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    out_dir = os.environ.get("OUT", os.path.join(REPO, "out"))
    os.makedirs(out_dir, exist_ok=True)
    bwl = os.path.join(REPO, "build", "bench", "workloads")
    busy = [bl.Child([os.path.join(bwl, "bench_chain"), str(secs + 30)]),
            bl.Child(["/usr/bin/python3", os.path.join(HERE, "workloads", "py_loop.py"),
                      str(secs + 30), "30"])]
    cc = subprocess.Popen(["bash", "-c", "while :; do gcc -O2 -c src/unwind/eh_frame.c -Isrc "
                           "-Ibpf/include -Ibuild/gen -D_GNU_SOURCE -o /dev/null; done"],
                          cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    time.sleep(1)
    kids, sinks = [], []
    for i, spec in enumerate(specs):
        exe, *more = spec.split(",")
        if mode == "agent":
            sink = bl.OtlpHttpSink()
            sinks.append(sink)
            argv = [exe, "agent", "-F", "20", "--interval", "5", "--otlp-endpoint",
                    f"127.0.0.1:{sink.port}", "--otlp-protocol", "http", "--insecure"]
        else:
            argv = [exe, "record", "-d", str(secs), "-F", "20", "-o",
                    os.path.join(out_dir, f"mem-record-{i}")]
        with open(os.path.join(out_dir, f"{mode}-{i}.err"), "w") as err:
            kids.append(bl.Child(argv + more, stderr=err))
    peak = [collections.Counter() for _ in kids]
    cpu = [None] * len(kids)
    end = time.monotonic() + secs + 60
    while time.monotonic() < end:
        running = [(i, c) for i, c in enumerate(kids) if bl.alive(c.pid)]
        if not running:
            break
        for i, c in running:
            m = by_mapping(c.pid)
            if m and sum(m.values()) > sum(peak[i].values()):
                peak[i] = m
            if mode == "agent" and cpu[i] is None and time.monotonic() - c.start >= secs:
                cpu[i] = bl.proc_cpu_s(c.pid)
                c.signal(signal.SIGTERM)
        time.sleep(0.2)
    for c in kids:
        c.wait(timeout=120)
    os.killpg(cc.pid, signal.SIGKILL)
    cc.wait()
    for b in busy:
        b.signal(signal.SIGKILL)
        b.wait(timeout=10)
    for sink in sinks:
        sink.close()
    for i, spec in enumerate(specs):
        ru = kids[i].rusage
        used = cpu[i] if cpu[i] is not None else ru.ru_utime + ru.ru_stime
        print(f"== {spec} {mode}: kernel high-water {kids[i].maxrss_mib:.1f} MiB, CPU "
              f"{used:.2f} s, largest smaps total {sum(peak[i].values()) / 1024:.1f} MiB")
        for name, kib in peak[i].most_common(14):
            print(f"   {kib / 1024:7.2f}  {name}")


if __name__ == "__main__":
    main()
