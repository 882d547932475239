# frozen_string_literal: true

require_relative 'errors'
require_relative 'generators'
require_relative 'loading'
require_relative 'schedule'
require_relative 'sqltext'

# A step message → a Step (protocol/PROTOCOL.md, "step"). Every field is read and checked
# here, before anything runs: every protocol error of a step, and every `unsupported` one that
# the message and the driver's declarations decide (a kind, a mode, a connection policy,
# several clients in a one-client process). The parameters are generated here too and put in
# the driver's own form (its `adapt`; for `literal` rendered into statement texts): all of it
# before the clock. What runs the step (runner.rb) reads the Step and never the message.
module Accessbench
  # What a step under load asks for beyond the plain loop (falsy fields count as absent).
  Load = Struct.new(:duration_ns, :rate, :arrival, :seed, :phase_ns, :late_ns, :skip_ns, :start_at,
                    keyword_init: true)

  Step = Struct.new(
    :kind,        # connect, scan, exec or batch
    :mode,        # literal, extended or prepared (scan: nil)
    :sql,         # the statement with neutral `?` markers (nil for connect)
    :shape,       # what the statement does (a layer's), or nil
    :plan,        # load: the parents, the levels and their statements (loading.rb)
    :n,           # iterations
    :args,        # one argument per operation (batch: a group of rows), made before the clock
    :reads,       # the op returns rows (else the rows it changed)
    :every,       # commit_every (0: none)
    :verify,      # the untimed verification pass instead of a timed one
    :dump,        # verification: how many rows read to answer as typed values
    :policy,      # persistent or per-request
    :clients,
    :loaded,      # runs under load (load.rb) rather than the plain loop
    :load,        # the Load of a loaded step that is not a verification
    :latency_file,
    keyword_init: true
  )

  module StepParser
    KINDS = %w[connect scan exec batch].freeze

    # the kinds a driver has: the four, and load where it has loading associations
    def self.kinds_of(driver) = driver.load? ? KINDS + ['load'] : KINDS
    EXEC_MODES = %w[literal extended prepared].freeze

    module_function

    def int_field(msg, key, default = :required)
      v = msg[key]
      if v.nil?
        raise ProtocolError, "missing field '#{key}'" if default == :required

        return default
      end
      return v if v.is_a?(Integer)
      return v.to_i if v.is_a?(String) && v.match?(/\A-?\d+\z/)

      raise ProtocolError, "field '#{key}' must be an integer"
    end

    # as the Python reference reads a field: absent, null, false, 0 and empty are false
    def truthy(v)
      return false if v.nil? || v == false || v == 0

      !(v.respond_to?(:empty?) && v.empty?)
    end

    # The step a message asks for, of a session open on `dbms`, for `driver`.
    def parse(msg, driver, dbms)
      kind = msg['kind']
      unless kinds_of(driver).include?(kind)
        raise Unsupported, "#{driver.method_name} has no #{kind} steps" if %w[load page].include?(kind)

        raise ProtocolError, "unknown step kind #{kind.inspect}"
      end

      step = Step.new(kind: kind, n: int_field(msg, 'iterations'), every: 0, reads: false)
      raise ProtocolError, 'a step needs iterations >= 0' if step.n.negative?

      step.mode = msg['mode'] if %w[scan exec].include?(kind)
      raise Unsupported, "#{driver.method_name} has no record-level access (mode record)" if step.mode == 'record'

      step.sql = kind == 'connect' ? nil : msg['sql']
      raise ProtocolError, "a #{kind} step needs sql" unless kind == 'connect' || step.sql.is_a?(String)

      # set on the driver before its parameters are adapted (a layer binds each by its column)
      step.shape = msg['shape']
      driver.shape = step.shape
      send("parse_#{kind}", step, msg, driver, dbms, specs_of(msg, step.sql))
      parse_policy(step, msg, driver)
      step.latency_file = msg['latency_file']
      step
    end

    def specs_of(msg, sql)
      specs = msg['params'] || []
      raise ProtocolError, 'params must be a list' unless specs.is_a?(Array)

      markers = sql ? SqlText.count_markers(sql) : 0
      raise ProtocolError, "#{markers} markers but #{specs.length} params" if specs.length != markers

      specs
    end

    def parse_connect(step, *)
      step.args = Array.new(step.n)
    end

    def parse_scan(step, _msg, _driver, _dbms, specs)
      raise ProtocolError, "a scan runs one query without params, but the sql has #{specs.length} markers" if specs.any?

      step.args = Array.new(step.n)
      step.reads = true
    end

    def parse_exec(step, msg, driver, dbms, specs)
      step.args = exec_args(driver, step.sql, step.mode, specs, step.n, dbms)
      step.reads = truthy(msg['fetch'])
      step.every = int_field(msg, 'commit_every', 0)
      raise ProtocolError, 'commit_every must be >= 0' if step.every.negative?
    end

    # An exec step's arguments, one per operation, made before anything runs — for the worker's
    # steps and the web tier's pages (web.rb) alike: the mode checked, then the generated rows
    # put in the driver's form (`arguments`).
    def exec_args(driver, sql, mode, specs, count, dbms)
      check_mode(driver, mode)
      arguments(driver, sql, mode, *Generators.rows(specs, count), dbms)
    end

    def check_mode(driver, mode)
      raise ProtocolError, "unknown mode #{mode.inspect}" unless EXEC_MODES.include?(mode)
      return if driver.modes.include?(mode)

      raise Unsupported, "#{driver.method_name} has no #{mode} mode: #{driver.settings[mode]}"
    end

    # rows of values → an op's arguments: the driver's parameter values, or under literal the
    # statement texts with the values inlined by the literal rules (a layer that inlines values
    # itself is given them)
    def arguments(driver, sql, mode, rows, types, dbms)
      return driver.adapt(rows, types) if mode != 'literal'
      return driver.adapt_literals(rows, types) if driver.binds_literals?

      segs = SqlText.segments(sql)
      rows.map { |row| SqlText.inline(segs, row, dbms) }
    end

    # the parents' parameters, bound as the driver's extended mode binds them
    def parse_load(step, msg, driver, _dbms, specs)
      step.plan = Loading.plan(msg, step.shape)
      step.reads = true
      step.args = driver.adapt(*Generators.rows(specs, step.n))
    end

    def parse_batch(step, msg, driver, _dbms, specs)
      size = int_field(msg, 'batch')
      raise ProtocolError, 'a batch step needs batch >= 1' if size < 1

      rows, types = Generators.rows(specs, step.n)
      step.args = driver.adapt(rows, types).each_slice(size).to_a
    end

    # verification or the timed pass; plain loop or under load; the connection policy and the
    # load's fields (read only for a loaded step that is not a verification)
    def parse_policy(step, msg, driver)
      step.policy = check_policy(driver, msg['policy'] || 'persistent')
      step.clients = int_field(msg, 'clients', 1)
      raise ProtocolError, 'clients must be >= 1' if step.clients < 1

      step.loaded = step.policy != 'persistent' || step.clients != 1 ||
                    %w[duration_ms rate histogram].any? { |k| truthy(msg[k]) }
      check_commits(step, msg)
      step.verify = truthy(msg['verify'])
      step.dump = step.verify ? int_field(msg, 'dump', 0) : 0
      raise ProtocolError, 'dump must be >= 0' if step.dump.negative?

      step.load = load_of(msg, step, driver) if step.loaded && !step.verify
    end

    # a connection policy the driver has built (the worker's steps and the web tier's pages alike)
    def check_policy(driver, policy)
      return policy if driver.load_policies.include?(policy)

      raise Unsupported, "#{driver.method_name} has no '#{policy}' connection policy (it has " \
                         "#{driver.load_policies.join(', ')}: the driver has no pool)"
    end

    def check_commits(step, msg)
      return unless step.loaded && step.every.positive? && (step.policy != 'persistent' || truthy(msg['duration_ms']))

      raise Unsupported, 'commit_every under load is built for persistent connections by count only (a ' \
                         'transaction cannot span connections, and by duration its last operation is not known ' \
                         'in advance)'
    end

    def load_of(msg, step, driver)
      if step.clients > 1
        raise Unsupported, "#{driver.method_name} drives one client per process (its API blocks the process): " \
                           'the runner starts one worker per client'
      end
      duration = number(msg, 'duration_ms')
      load = Load.new(duration_ns: duration && (duration * 1_000_000).to_i, rate: number(msg, 'rate'),
                      arrival: msg['arrival'] || 'poisson', seed: int_field(msg, 'schedule_seed', 0),
                      phase_ns: number(msg, 'phase_ns').to_i, skip_ns: number(msg, 'skip_ns'),
                      late_ns: msg['late_ns'].nil? ? 1_000_000 : msg['late_ns'],
                      start_at: truthy(msg['start_at_unix_ns']) ? int_field(msg, 'start_at_unix_ns') : nil)
      raise ProtocolError, "field 'phase_ns' must not be negative" if load.phase_ns.negative?

      Schedule.new(load.rate, load.arrival, 0) if load.rate # a bad rate or arrival: answered before anything runs
      load
    end

    def number(msg, key)
      v = msg[key]
      return nil unless truthy(v)
      raise ProtocolError, "field '#{key}' must be a number" unless v.is_a?(Numeric)

      v
    end
  end
end
