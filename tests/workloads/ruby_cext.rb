# Ruby -> a C extension -> a Ruby block: <main> -> Caller#go -> CExt.call_block
# (C: ruby_cext_call -> cext_middle -> rb_yield) -> block in Caller#go ->
# Caller#cb_leaf, which spins.
# Usage: ruby ruby_cext.rb SECONDS PATH_TO_ruby_cext.so
require ARGV[1]

class Caller
  def cb_leaf(deadline)
    x = 0
    while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
      i = 0
      while i < 2000
        x = (x * 31 + i) % 1000003
        i += 1
      end
    end
    x
  end

  def go(deadline)
    CExt.call_block { cb_leaf(deadline) }
  end
end

deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + Float(ARGV[0])
$stdout.write("ready\n")
$stdout.flush
Caller.new.go(deadline)
