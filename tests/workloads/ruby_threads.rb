# 8 Ruby threads, thread N in its own chain: Worker#run_N -> Worker#mid_N ->
# Worker#leaf_N, spinning in the leaf until the deadline (the GVL lets one
# run at a time: each gets its share of the samples).
# Usage: ruby ruby_threads.rb SECONDS
class Worker
  def spin(deadline)
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

  def leaf_0(d) = spin(d)
  def leaf_1(d) = spin(d)
  def leaf_2(d) = spin(d)
  def leaf_3(d) = spin(d)
  def leaf_4(d) = spin(d)
  def leaf_5(d) = spin(d)
  def leaf_6(d) = spin(d)
  def leaf_7(d) = spin(d)

  def mid(n, d)
    send(:"leaf_#{n}", d)
  end

  def run(n, d)
    mid(n, d)
  end
end

deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + Float(ARGV[0])
threads = 8.times.map { |n| Thread.new { Worker.new.run(n, deadline) } }
$stdout.write("ready\n")
$stdout.flush
threads.each(&:join)
