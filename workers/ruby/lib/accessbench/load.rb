# frozen_string_literal: true

require_relative 'clock'
require_relative 'histogram'
require_relative 'schedule'

# A step under load (protocol/PROTOCOL.md, "Steps under load"; the Python reference's
# pyworker/load.py): this process is one client (`concurrency` "processes": the runner starts
# one worker per client and merges their answers). It waits for the wall-clock barrier, then
# runs by count or by duration, closed loop (latency from the end of the previous operation)
# or open loop at a rate (latency from the intended start, so time queued behind a slow
# operation counts), every latency into the histogram.
#
# An open loop by duration lasts its duration: it starts no arrival at or after it and, its
# arrivals over, idles (untimed) until the duration has passed, its elapsed running to then;
# still behind schedule when it has passed, it counts the arrivals due before it that it had
# not started as skipped.
module Accessbench
  class LoadLoop
    # sleep until this close to an intended start, then spin: a sleep overshoots
    SPIN_NS = 100_000

    Result = Struct.new(:n, :rows, :elapsed, :late, :skipped, :first, :histogram, keyword_init: true)

    def initialize(op, args, reads, load)
      @op = op
      @args = args
      @reads = reads
      @load = load
      @schedule = load.rate ? Schedule.new(load.rate, load.arrival, load.seed & MASK64) : nil
      # uniform arrivals start at this worker's phase (one client: client 0's stream)
      @phase = @schedule && load.arrival == 'uniform' ? load.phase_ns : 0
      @hist = Histogram.new
    end

    # the barrier: return when the wall clock reaches unix_ns (nil: at once)
    def self.barrier(unix_ns)
      return if unix_ns.nil?

      left = unix_ns - Clock.wall
      sleep((left - SPIN_NS) / 1e9) if left > SPIN_NS
      nil while Clock.wall < unix_ns
    end

    # runs from `start` (Clock.now, taken just after the barrier); times are ns since it
    def run(start)
      @start = start
      @prev = 0
      @i = 0
      @rows = 0
      @late = 0
      @skipped = 0
      @first = 0
      loop_operations unless @args.empty?
      finish_open_loop if @schedule && @load.duration_ns && !@args.empty?
      Result.new(n: @i - @skipped, rows: @rows, elapsed: @prev, late: @late, skipped: @skipped, first: @first,
                 histogram: @hist)
    end

    private

    def since = Clock.now - @start

    def loop_operations
      stop = @load.duration_ns
      # by duration, while the previous operation ended before the stop: no backlog served past it
      while stop.nil? ? @i < @args.length : @prev < stop
        arg = @args[@i % @args.length]
        if @schedule
          break if open_operation(arg, stop) == :over
        else
          closed_operation(arg)
        end
      end
    end

    def closed_operation(arg)
      result = @op.call(arg)
      now = since
      account(result, now, now - @prev)
    end

    # :over when the arrivals are over (the trial may not be)
    def open_operation(arg, stop)
      intended = @phase + @schedule.next_offset
      return :over if stop && intended >= stop

      now = since
      if now < intended
        wait_until(intended)
      elsif @load.skip_ns && now - intended > @load.skip_ns
        @skipped += 1
        @i += 1
        return
      elsif now - intended > @load.late_ns
        @late += 1
      end
      result = @op.call(arg)
      now = since
      account(result, now, now - intended)
    end

    def account(result, now, latency)
      @rows += @reads ? result.length : result
      @hist.record(latency)
      @first = latency if @i == @skipped
      @prev = now
      @i += 1
    end

    # ahead of schedule: sleep, then spin the last SPIN_NS
    def wait_until(rel)
      left = rel - since
      sleep((left - SPIN_NS) / 1e9) if left > SPIN_NS
      nil while since < rel
    end

    def finish_open_loop
      stop = @load.duration_ns
      if @prev < stop # an open loop lasts its duration (idle, untimed, nothing measured then)
        while (left = stop - since).positive?
          sleep(left / 1e9)
        end
        @prev = stop
      else # behind schedule at the end: the arrivals due before it that never started
        while @phase + @schedule.next_offset < stop
          @skipped += 1
          @i += 1
        end
      end
    end
  end
end
