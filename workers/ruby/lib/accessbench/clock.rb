# frozen_string_literal: true

# The clocks of a measurement: the monotonic clock in integer nanoseconds (one read per
# operation), the wall clock for the barrier of a step under load, and the process's CPU time
# from getrusage (Process.times reads RUSAGE_SELF: the whole process, microsecond resolution).
module Accessbench
  module Clock
    module_function

    def now = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)

    def wall = Process.clock_gettime(Process::CLOCK_REALTIME, :nanosecond)

    # [user_ns, sys_ns] so far; getrusage's µs come as Float seconds, rounded back to µs
    def cpu
      t = Process.times
      [(t.utime * 1e6).round * 1000, (t.stime * 1e6).round * 1000]
    end
  end
end
