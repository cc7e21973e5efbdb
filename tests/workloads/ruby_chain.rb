# <main> -> Shop.open (singleton) -> Shop#serve -> Shop#pick -> block in
# Shop#pick (Integer#times) -> Shop#step -> ... -> Shop#leaf: the leaf spins
# on arithmetic, so nearly every sample lands in it with the whole chain below.
# Usage: ruby ruby_chain.rb SECONDS [DEPTH [LINGER]]
#   DEPTH (default 0): extra recursion levels (Shop#rec) between the links and the leaf.
#   LINGER (default 0): seconds to sleep before exiting (frames are named while the
#   process lives: a profiler that lags behind under load still finds it).
class Shop
  def self.open(deadline, depth)
    new.serve(deadline, depth)
  end

  def serve(deadline, depth)
    pick(deadline, depth)
  end

  def pick(deadline, depth)
    r = 0
    1.times do
      r = link_1(deadline, depth)
    end
    r
  end

  def link_1(deadline, depth)
    link_2(deadline, depth)
  end

  def link_2(deadline, depth)
    link_3(deadline, depth)
  end

  def link_3(deadline, depth)
    rec(depth, deadline)
  end

  def rec(n, deadline)
    return leaf(deadline) if n == 0
    rec(n - 1, deadline) + 1
  end

  def leaf(deadline)
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
end

seconds = Float(ARGV[0])
depth = ARGV[1] ? Integer(ARGV[1]) : 0
$stdout.write("ready\n")
$stdout.flush
Shop.open(Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds, depth)
sleep(Float(ARGV[2])) if ARGV[2]
