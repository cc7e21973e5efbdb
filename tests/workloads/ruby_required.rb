# Required by ruby_require.rb: spins at its top level until $deadline.
module Required
  def self.inner(deadline)
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

  def self.outer(deadline)
    inner(deadline)
  end
end

Required.outer($deadline)
