# A script that requires another file, which spins while it is being
# required: <main> -> Kernel#require_relative -> <top (required)> of
# ruby_required.rb -> Required.outer -> Required.inner (singleton methods).
# Usage: ruby ruby_require.rb SECONDS
$deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + Float(ARGV[0])
$stdout.write("ready\n")
$stdout.flush

def load_it
  require_relative "ruby_required"
end

load_it
