#!/usr/bin/env python3
"""The agent's or record's peak by mapping, and the file pages it held (issue 22, session 21).

    bench/file_pages_peak.py OMNIPROF agent|record SECONDS [EXTRA ARGS]

Starts bench_chain and py_loop.py (whole system, 20 Hz), then `agent -F 20
--interval 5` to a local OTLP/HTTP receiver (stopped after SECONDS) or `record
-d SECONDS -F 20`, and reads its /proc/PID/smaps every 0.02 s (0.1 s after 6 s).
Prints the agent's CPU, every new high-water (VmHWM), the largest rw-p file
mappings total seen (the ELF and debug files libelf maps to read: ELF_C_READ_MMAP
maps them private, writable), the largest total before 9 s (the first
interval's naming) and over the run by mapping, and the most of each
libpython/debug-file mapping seen. Output of the profile and stderr in /tmp.
"""
import collections
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchlib as bl  # noqa: E402
exe = sys.argv[1]; mode = sys.argv[2]; secs = int(sys.argv[3])
bwl = os.path.join(os.path.dirname(exe), "bench", "workloads")
chain = subprocess.Popen([os.path.join(bwl, "bench_chain"), str(secs+20)], stdout=subprocess.DEVNULL)
py = subprocess.Popen(["python3", os.path.join(HERE, "workloads", "py_loop.py"), str(secs+20), "30"], stdout=subprocess.DEVNULL)
time.sleep(1)
sink = bl.OtlpHttpSink()
if mode == "agent":
    argv = [exe, "agent", "-F", "20", "--interval", "5", "--otlp-endpoint", f"127.0.0.1:{sink.port}", "--otlp-protocol", "http", "--insecure"] + sys.argv[4:]
else:
    argv = [exe, "record", "-d", str(secs), "-F", "20", "-o", "/tmp/file_pages_peak.pb.gz"] + sys.argv[4:]
t0 = time.monotonic()
c = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open("/tmp/file_pages_peak.err", "w"))
best = None; bt = 0; hist = []; early=None; et=0; filesmax=0; filest=0; fmax=collections.Counter()
def smaps(pid):
    per = collections.Counter(); name = None
    try:
        for line in open(f"/proc/{pid}/smaps", errors="replace"):
            f = line.split(None, 5)
            if f and "-" in f[0] and all(ch in "0123456789abcdef-" for ch in f[0]):
                name = (f[5].strip() if len(f) > 5 else "[anon]") + " " + f[1]
            elif line.startswith("Rss:"):
                per[name] += int(line.split()[1])
    except OSError:
        return None
    return per
while c.poll() is None:
    now = time.monotonic() - t0
    if mode == "agent" and now > secs:
        cpu = bl.proc_cpu_s(c.pid); c.send_signal(signal.SIGTERM); print("cpu first", secs, "s:", cpu); break
    p = smaps(c.pid)
    try:
        st = open(f"/proc/{c.pid}/status").read()
        import re
        hwm = int(re.search(r"VmHWM:\s+(\d+)", st).group(1)); rss = int(re.search(r"VmRSS:\s+(\d+)", st).group(1))
        hist.append((now, hwm, rss))
    except Exception: pass
    if p:
        fs = sum(v for k,v in p.items() if k.endswith(' rw-p') and '/' in k)
        if fs > filesmax: filesmax, filest = fs, now
        for k,v in p.items():
            if 'dbg1' in k or 'libpython' in k: fmax[k]=max(fmax[k],v)
    if p and now < 9 and (early is None or sum(p.values()) > sum(early.values())):
        early = p; et = now
    if p and (best is None or sum(p.values()) > sum(best.values())):
        best = p; bt = now
    time.sleep(0.02 if now < 6 else 0.1)
c.wait()
last = 0
for t, h, r in hist:
    if h != last: print('t=%.2f hwm=%.1f rss=%.1f' % (t, h/1024, r/1024)); last = h
chain.kill(); py.kill(); sink.close()
print("files rw-p max %.1f MiB at %.1f s" % (filesmax/1024, filest))
print("early peak %.1f MiB at %.1f s" % (sum(early.values())/1024, et))
for k, v in early.most_common(8):
    print("  early %8.2f MiB  %s" % (v/1024, k))
for k, v in fmax.most_common(6):
    print("  filemax %8.2f MiB  %s" % (v/1024, k))
print("peak smaps total %.1f MiB at %.1f s" % (sum(best.values())/1024, bt))
for k, v in best.most_common(40):
    print("%8.2f MiB  %s" % (v/1024, k))
