# The main Ractor and 2 more, each on its own native thread with its own
# execution context, each in its own chain (Crew.run -> Crew.leaf_N ->
# Crew.spin), spinning until the deadline. Ractors run in parallel (no
# shared GVL): each gets its samples.
# Usage: ruby ruby_ractors.rb SECONDS
Warning[:experimental] = false

class Crew
  def self.spin(deadline)
    x = 0
    while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
      i = 0
      while i < 500
        x = (x * 31 + i) % 1000003
        i += 1
      end
    end
    x
  end

  def self.leaf_0(d) = spin(d)
  def self.leaf_1(d) = spin(d)
  def self.leaf_2(d) = spin(d)

  def self.run(n, d)
    send(:"leaf_#{n}", d)
  end
end

deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + Float(ARGV[0])
ractors = [1, 2].map { |n| Ractor.new(n, deadline) { |k, d| Crew.run(k, d) } }
$stdout.write("ready\n")
$stdout.flush
Crew.run(0, deadline)
ractors.each(&:take)
