# SPDX-License-Identifier: Apache-2.0
# A busy Ruby workload for the benchmarks: DEPTH nested Ruby calls, then a
# loop of pure-Ruby arithmetic until SECONDS have passed (or SIGTERM). It
# prints "ready" once running.
#
# Usage: ruby rb_loop.rb SECONDS DEPTH
$stop = false
Signal.trap("TERM") { $stop = true }

def leaf_loop(deadline)
  x = 1
  until $stop || Process.clock_gettime(Process::CLOCK_MONOTONIC) >= deadline
    i = 0
    while i < 1000
      x = (x * 1103515245 + 12345) & 0xFFFFFFFF
      i += 1
    end
  end
  x
end

def nest(n, deadline)
  return leaf_loop(deadline) if n <= 1
  nest(n - 1, deadline)
end

deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + Float(ARGV[0])
$stdout.write("ready\n")
$stdout.flush
nest(Integer(ARGV[1]), deadline)
