# frozen_string_literal: true

require_relative 'checksum'
require_relative 'clock'
require_relative 'driver'
require_relative 'load'
require_relative 'loading'

# Runs a parsed step (step.rb) on a driver: its op built by the driver, then the untimed
# verification pass, the plain timed loop or the loop under load (load.rb). After a `db`
# error the connection is recovered (an open transaction rolled back); what the step prepared
# is released after it, whatever happened (untimed).
#
# What is inside the clock: only the op. Its argument (parameters in the driver's form, or a
# literal statement text) was made before; the monotonic clock is read once before the loop
# and once after each operation, so operation i runs from the end of i−1 to its own end and
# the latencies add up to elapsed_ns exactly. The latencies go into an Array allocated before
# the loop and are written to the latency file after it.
module Accessbench
  class Runner
    def initialize(driver, log)
      @d = driver
      @log = log
    end

    def run(step)
      d = @d
      d.counter = step.verify ? Driver::Counter.new(0, false) : nil
      d.api = nil
      build = builder(step)
      answer = if step.verify then verify(step.policy == 'persistent' ? build.call(d.conn) : per_request(build), step)
               elsif step.loaded then loaded(step, build)
               else timed(build.call(d.conn), step)
               end
      answer['api'] = d.api if d.api
      answer['statements'] = d.counter.n if d.counter&.on
      answer
    rescue StandardError => e
      recover if d.db_error?(e)
      raise
    ensure
      d.counter = nil
      release
    end

    private

    def recover
      @d.recover(@d.conn)
    rescue StandardError => e
      @log.call("recover failed: #{e.class}: #{e.message}")
    end

    def release
      @d.end_step
    rescue StandardError => e
      @log.call("end of step: #{e.class}: #{e.message}")
    end

    # `build.call(conn)` makes the step's op on a connection, untimed where the op is built
    # before the clock (per request: inside it)
    def builder(step)
      d = @d
      case step.kind
      when 'connect' then ->(_conn) { connect_op }
      when 'scan' then ->(conn) { d.scan_op(step.sql, conn) }
      when 'batch' then ->(conn) { d.batch_op(step.sql, conn) }
      when 'load' then ->(conn) { d.load_op(step.plan, conn) }
      else
        lambda do |conn|
          op = d.exec_op(step.sql, step.mode, step.reads, conn)
          step.every.positive? ? with_commits(op, step.every, step.n, conn) : op
        end
      end
    end

    # a connect step's operation: a new connection to the endpoint, closed
    def connect_op
      d = @d
      lambda do |_|
        d.disconnect(d.connect)
        0
      end
    end

    # commit_every: BEGIN before the first of every K operations, COMMIT after the K-th or the
    # last, inside those operations' time
    def with_commits(op, every, total, conn)
      d = @d
      counter = d.counter
      done = 0
      lambda do |arg|
        if (done % every).zero?
          d.txn_begin(conn)
          counter.n += 1 if counter
        end
        result = op.call(arg)
        done += 1
        if (done % every).zero? || done == total
          d.txn_commit(conn)
          counter.n += 1 if counter
        end
        result
      end
    end

    # per-request policy: connect, build the op on the new connection, run it, disconnect — all
    # inside the operation's time (the session's own connection stays open, idle)
    def per_request(build)
      d = @d
      lambda do |arg|
        conn = d.connect
        begin
          build.call(conn).call(arg)
        ensure
          d.disconnect(conn)
        end
      end
    end

    def timed(op, step)
      args = step.args
      lat = Array.new(args.length, 0)
      user0, sys0 = Clock.cpu
      elapsed, rows = step.reads ? timed_reads(op, args, lat) : timed_changes(op, args, lat)
      user1, sys1 = Clock.cpu
      File.binwrite(step.latency_file, lat.pack('Q<*')) if step.latency_file
      answer = { 'n' => args.length, 'elapsed_ns' => elapsed, 'rows' => rows, 'user_ns' => user1 - user0,
                 'sys_ns' => sys1 - sys0, 'first_op_ns' => lat.first || 0 }
      finish(answer, step)
    end

    # the loops: one clock read per operation, nothing else in them but the op and a sum
    def timed_reads(op, args, lat)
      rows = 0
      start = prev = Clock.now
      args.each_with_index do |arg, i|
        rows += op.call(arg).length
        now = Clock.now
        lat[i] = now - prev
        prev = now
      end
      [prev - start, rows]
    end

    def timed_changes(op, args, lat)
      rows = 0
      start = prev = Clock.now
      args.each_with_index do |arg, i|
        rows += op.call(arg)
        now = Clock.now
        lat[i] = now - prev
        prev = now
      end
      [prev - start, rows]
    end

    # values (rows × columns where known) and the backend, for a timed answer
    def finish(answer, step)
      width = step.reads && step.kind != 'load' ? @d.width : nil
      answer['values'] = answer['rows'] * width if width
      pid = @d.server_pid
      answer['server_pids'] = [pid] if step.policy == 'persistent' && pid.to_i.positive?
      answer
    end

    # The untimed verification pass: every value read is checksummed (with `dump`, the first
    # rows kept as typed values); the first operation, its rows checksummed, is the cold start.
    def verify(op, step)
      sum = Checksum.new(step.dump)
      changed = 0
      width = 0
      first = 0
      start = Clock.now
      step.args.each_with_index do |arg, i|
        result = op.call(arg)
        if result.is_a?(Loading::Entities) # each level's entities with their own kinds
          checksum_levels(sum, result)
          width += result.rows.sum(&:length)
        elsif step.reads
          kinds = @d.kinds
          result.each { |row| sum.add_row(row, kinds) }
          width = @d.width || width
        else
          changed += result
        end
        first = Clock.now - start if i.zero?
      end
      values = step.kind == 'load' ? width : sum.rows * width # a load's width: the values read, summed
      answer = { 'n' => step.args.length, 'rows' => step.reads ? sum.rows : changed,
                 'values' => step.reads ? values : 0, 'checksum' => sum.hex, 'first_op_ns' => first }
      answer['dump'] = sum.dumped if step.dump.positive? && step.reads
      answer
    end
    # the web tier's pages (web.rb) answer their verify form by it: the same pass, the same checksum
    public :verify

    def checksum_levels(sum, entities)
      at = 0
      entities.levels.each do |count, kinds|
        entities.rows[at, count].each { |row| sum.add_row(row, kinds) }
        at += count
      end
    end

    # A step under load: this process's one client, its op on the session's connection
    # (persistent) or a connection per operation (per-request), started at the barrier.
    def loaded(step, build)
      op = step.policy == 'persistent' ? build.call(@d.conn) : per_request(build)
      LoadLoop.barrier(step.load.start_at)
      user0, sys0 = Clock.cpu
      r = LoadLoop.new(op, step.args, step.reads, step.load).run(Clock.now)
      user1, sys1 = Clock.cpu
      answer = { 'n' => r.n, 'elapsed_ns' => r.elapsed, 'rows' => r.rows, 'first_op_ns' => r.first,
                 'histogram' => r.histogram.to_wire, 'late' => r.late, 'skipped' => r.skipped, 'clients' => 1,
                 'per_client' => [{ 'n' => r.n, 'elapsed_ns' => r.elapsed }], 'user_ns' => user1 - user0,
                 'sys_ns' => sys1 - sys0 }
      finish(answer, step)
    end
  end
end
