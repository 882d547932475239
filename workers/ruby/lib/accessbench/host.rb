# frozen_string_literal: true

require 'json'
require_relative 'checksum'
require_relative 'clock'
require_relative 'errors'
require_relative 'generators'
require_relative 'histogram'
require_relative 'registry'
require_relative 'runner'
require_relative 'schedule'
require_relative 'step'

# The session of one worker process (protocol/PROTOCOL.md): parse message → dispatch on op →
# answer. A step is parsed and checked whole first (step.rb), then run (runner.rb).
module Accessbench
  class Host
    PROTOCOL = 1

    # `driver` is nil when the method cannot be used; `why` then says why, and every message is
    # answered `unsupported` with it (bye still ends)
    def initialize(method_name, driver, why, log)
      @method = method_name
      @driver = driver
      @why = why
      @log = log
      @endpoint = nil
    end

    def handle(msg)
      raise ProtocolError, 'not a JSON object' unless msg.is_a?(Hash)
      raise Unsupported, @why if @driver.nil? # bye too (main.rb still ends on it)

      case msg['op']
      when 'hello' then hello
      when 'open' then open(msg)
      when 'close', 'bye' then close
      when 'step' then step(msg)
      when 'generate' then generate(msg)
      when 'checksum' then checksum(msg)
      when 'histogram' then histogram(msg)
      when 'schedule' then schedule(msg)
      else raise ProtocolError, "unknown op #{msg['op'].inspect}"
      end
    end

    def close
      return {} if @endpoint.nil? || @driver.nil?

      @endpoint = nil
      conn = @driver.conn
      @driver.conn = nil
      @driver.disconnect(conn) if conn
      {}
    end

    # The error answer of an exception: by kind, the first line of its message.
    def error_answer(error)
      kind, message, sqlstate = classify(error)
      if kind == 'internal'
        @log.call("#{error.class}: #{error.message}\n  #{Array(error.backtrace).first(12).join("\n  ")}")
      else
        @log.call("#{kind}: #{message}")
      end
      line = message.to_s.scrub.strip.lines.first.to_s.strip
      err = { 'kind' => kind, 'message' => line.empty? ? kind : line }
      err['sqlstate'] = sqlstate if sqlstate
      { 'ok' => false, 'error' => err }
    end

    private

    def classify(error)
      case error
      when Unsupported then ['unsupported', error.message]
      when ProtocolError, JSON::ParserError then ['protocol', "#{error.class.name.split('::').last}: #{error.message}"]
      else
        if @driver&.db_error?(error)
          ['db', @driver.error_message(error), @driver.sqlstate(error)]
        else
          ['internal', "#{error.class}: #{error.message}"]
        end
      end
    end

    def hello
      d = @driver
      { 'protocol' => PROTOCOL, 'name' => @method, 'language' => 'ruby',
        'runtime' => "Ruby #{RUBY_VERSION}p#{RUBY_PATCHLEVEL} (#{RUBY_ENGINE}, #{RUBY_PLATFORM})",
        'driver' => d.driver_name, 'driver_version' => d.driver_version, 'methods' => Registry.names,
        'settings' => d.settings.merge(HOST_SETTINGS).merge('runtime' => runtime_setting),
        'capabilities' => capabilities(d) }
    end

    # the JIT this process runs with, if any (RUBYOPT may enable one): then the runner warms up
    def jit
      return 'YJIT' if defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled?

      'MJIT' if defined?(RubyVM::MJIT) && RubyVM::MJIT.enabled?
    end

    def runtime_setting
      return "CRuby with #{jit}: the runner warms each cell until it is stable" if jit

      'CRuby without a JIT (neither YJIT nor MJIT enabled): the loops interpret the same bytecode from the first ' \
        'operation on; GC as configured by default'
    end

    HOST_SETTINGS = {
      'timing' => 'Process.clock_gettime(CLOCK_MONOTONIC, :nanosecond) once before the loop and once after each ' \
                  'operation; latencies into an Array allocated before the loop, written to the latency file after it',
      'cpu' => 'Process.times around the loop: getrusage(RUSAGE_SELF), the whole process (its one Ruby thread ' \
               'and any thread a C library runs), microsecond resolution',
      'under load' => 'one client per worker process (the runner starts one process per client); it waits for ' \
                      'the wall-clock barrier start_at_unix_ns (CLOCK_REALTIME: sleep, then a spin of the last ' \
                      '100 µs), then runs by count or by duration, closed loop, or open loop on its arrival stream ' \
                      '(splitmix64 seeded schedule_seed; uniform from phase_ns) with latency from the intended ' \
                      'start, sleeping then spinning the last 100 µs when ahead, late/skipped as the protocol ' \
                      'says; every latency into a preallocated histogram; commit_every only with a persistent ' \
                      'connection and by count'
    }.freeze

    def capabilities(d)
      caps = { 'dbms' => d.dbms, 'kinds' => StepParser.kinds_of(d), 'modes' => d.modes, 'batch' => d.batch_style,
               'concurrency' => 'processes', 'load' => { 'policies' => d.load_policies } }
      caps['jit'] = true if jit
      caps['shapes'] = d.shapes if d.shapes
      caps['deviations'] = d.deviations unless d.deviations.empty?
      caps
    end

    def open(msg)
      ep = msg['endpoint']
      raise ProtocolError, 'open needs an endpoint object' unless ep.is_a?(Hash)
      raise Unsupported, "#{@method} does not reach dbms '#{ep['dbms']}'" unless @driver.dbms.include?(ep['dbms'])

      close # a second open replaces the first connection
      @driver.endpoint = ep # untimed: the endpoint read, TLS mapped (Unsupported here)
      start = Clock.now
      conn = @driver.connect
      connect_ns = Clock.now - start
      info = describe(conn)
      @driver.conn = conn
      @endpoint = ep
      { 'connect_ns' => connect_ns }.merge(info)
    end

    # untimed, after open's connect; a connection it refuses is closed again
    def describe(conn)
      @driver.describe(conn)
    rescue StandardError
      begin
        @driver.disconnect(conn)
      rescue StandardError => e
        @log.call("closing a refused connection: #{e.message}")
      end
      raise
    end

    def step(msg)
      raise ProtocolError, 'step before open' if @endpoint.nil?

      step = StepParser.parse(msg, @driver, @endpoint['dbms'])
      Runner.new(@driver, @log).run(step)
    end

    def generate(msg)
      count = StepParser.int_field(msg, 'count', 0)
      { 'values' => Generator.new(msg['spec']).take(count).map { |v| Generators.to_json_value(v) } }
    end

    def checksum(msg)
      rows = msg['rows']
      raise ProtocolError, 'checksum needs rows' unless rows.is_a?(Array)

      sum = Checksum.new
      rows.each do |row|
        raise ProtocolError, 'a row is a list' unless row.is_a?(Array)

        values, kinds = row.map { |t| Checksum.typed_value(t) }.transpose
        sum.add_row(values || [], kinds)
      end
      { 'checksum' => sum.hex, 'rows' => sum.rows }
    end

    def histogram(msg)
      values = msg['values']
      raise ProtocolError, 'histogram needs values' unless values.is_a?(Array)

      h = Histogram.new
      values.each do |v|
        raise ProtocolError, 'histogram values are integers' unless v.is_a?(Integer)

        h.record(v)
      end
      { 'histogram' => h.to_wire }
    end

    def schedule(msg)
      seed = msg['seed']
      raise ProtocolError, 'schedule needs a hex seed' unless seed.is_a?(String) && seed.match?(/\A\h{1,16}\z/)

      s = Schedule.new(msg['rate'], msg['arrival'] || 'poisson', seed.to_i(16))
      { 'offsets' => Array.new(StepParser.int_field(msg, 'count')) { s.next_offset } }
    end
  end
end
