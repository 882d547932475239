# frozen_string_literal: true

require 'cgi'
require 'json'
require 'rack'
require_relative 'checksum'
require_relative 'clock'
require_relative 'errors'
require_relative 'host'
require_relative 'registry'
require_relative 'runner'
require_relative 'step'

# The web tier's Ruby pages (docs/tier.md): one Rack application (config.ru), run by the tier
# worker under Puma in cluster mode (tier/servers/puma.py):
#
#   puma --workers N --threads 1:1 --preload workers/ruby/config.ru
#
# Pages: /static.html, /hello, /op?step=ID[&verify=1[&dump=N]], /op?connect=1 (the host's open)
# and TechEmpower's tests, /db, /queries, /fortunes and /updates with ?step=ID[&verify=1]. The
# operation page is a Ruby worker driver as a page uses it: the method endpoint.json's page_driver
# names (rb-puma-pg → rb-pg …), with the step's arguments (StepParser.exec_args), its op (the
# driver's builders), the connection as the worker's open makes it (Host) and the verification
# pass (Runner#verify, Checksum) all the worker's own, so the page measures the same operation as
# the worker does, plus the app server around it.
#
# A Puma worker of one thread serves one request at a time: everything kept here (the steps,
# their ops, the process's connection) belongs to its process and needs no lock. Nothing
# connects before a request asks for it, so the app is loaded before Puma forks (--preload)
# without sharing a connection between processes.
module Accessbench
  module Web
    # The bytes of the static page, read once (the path from the tier worker; by default the checkout's).
    STATIC = File.binread(ENV['ACCESSBENCH_STATIC_PAGE'] ||
                          File.expand_path('../../../../src/accessbench/tier/static.html', __dir__)).freeze
    HELLO = "Hello, world!\n"
    STEP_ID = /\A[A-Za-z0-9_-]+\z/.freeze
    TESTS = %w[db queries fortunes updates].freeze # TechEmpower's tests (tier/tfb.py)
    ADDED = 'Additional fortune added at request time.' # TechEmpower's rule: id 0, added per request
    JSON_TYPE = 'application/json'
    HTML_TYPE = 'text/html; charset=utf-8'
    VERIFIED = %w[n rows values checksum dump].freeze # what a verify form answers of the pass

    # A step id the tier directory does not hold (or not of the page asked): 404.
    class NoStep < StandardError; end

    # One statement of a step as a page runs it, on a driver object of its own: rb-pg keeps the
    # encoders of the arguments it adapted last and the columns of the rows it read last, which
    # are then this statement's; the connections are the process's (Tier). Its op is built once
    # per kept connection, as an app keeps its statements (a prepared statement is prepared at
    # its first use and reused after); on a per-request connection, inside the request.
    class Statement
      attr_reader :driver

      def initialize(driver, kind, sql, mode, reads, types, dbms)
        @driver = driver
        @kind = kind
        @sql = sql
        @mode = mode
        @reads = reads
        @types = types
        @dbms = dbms
        @ops = {}.compare_by_identity # connection → op
      end

      # rows of values → the op's arguments, as the worker makes its own (step.rb)
      def args(rows) = StepParser.arguments(@driver, @sql, @mode, rows, @types, @dbms)

      def op(conn, kept)
        return build(conn) unless kept

        @ops[conn] ||= build(conn)
      end

      private

      def build(conn) = @kind == 'scan' ? @driver.scan_op(@sql, conn) : @driver.exec_op(@sql, @mode, @reads, conn)
    end

    # An exec or scan step of the operation page (steps/ID.json, which never changes once
    # written): read once per process, its arguments made as the worker's step.rb makes them.
    class OpStep
      attr_reader :policy, :statement, :step

      def initialize(spec, tier)
        kind = spec['kind']
        unless %w[exec scan].include?(kind)
          raise Unsupported, "the operation page runs exec and scan steps, not #{kind.inspect}"
        end

        sql = spec['sql']
        count = StepParser.int_field(spec, 'count')
        reads = kind == 'scan' || StepParser.truthy(spec['fetch']) # a scan: the statement as it is, every row read
        @statement = tier.statement(sql, spec['mode'], spec['types'], kind: kind, reads: reads)
        driver = @statement.driver
        args = if kind == 'scan' then Array.new(count)
               else StepParser.exec_args(driver, sql, spec['mode'], StepParser.specs_of(spec, sql), count, tier.dbms)
               end
        @policy = StepParser.check_policy(driver, spec['policy'] || 'persistent')
        @step = Step.new(kind: kind, sql: sql, n: count, args: args, reads: reads, policy: @policy, dump: 0)
      end

      def statements = [@statement]
    end

    # A page step of TechEmpower's tests (tier/tfb.py): its statements (the read, and the updates'
    # write) in the step's mode and policy; the keys' range a page draws from per query; and for
    # the verify form the keys (`args`) and the updates' numbers the shared generators made, so
    # that every language reads the same rows.
    class TestStep
      attr_reader :page, :policy, :queries, :count, :range, :keys, :numbers, :read, :write

      def initialize(spec, tier)
        @page = spec['page']
        mode = spec['mode']
        key = (spec['params'] || []).first
        types = spec['types'] || []
        @read = tier.statement(spec['sql'], mode, types)
        @write = spec['write'] && tier.statement(spec['write'], mode, [types.first, types.first]) # number, key
        StepParser.check_mode(@read.driver, mode)
        @policy = StepParser.check_policy(@read.driver, spec['policy'] || 'persistent')
        @queries = Integer(spec['queries'] || 1)
        @count = Integer(spec['count'])
        @range = key && (Integer(key['lo'])..Integer(key['hi']))
        @keys = key ? spec['args'].map(&:first) : []
        @numbers = spec['numbers'] || []
        statements.each { |s| s.args([]) } # each driver object's encoders set for its statement's types
      end

      def statements = [@read, @write].compact
    end

    # This process's side of the tier: the endpoint, the page driver, its steps, and the
    # connection the process keeps.
    class Tier
      attr_reader :session, :random, :dbms

      def initialize(log)
        dir = ENV['ACCESSBENCH_TIER_DIR'] or raise 'ACCESSBENCH_TIER_DIR is not set'
        config = JSON.parse(File.read(File.join(dir, 'endpoint.json')))
        @steps_dir = File.join(dir, 'steps')
        @endpoint = config['endpoint'].dup
        password = ENV['ACCESSBENCH_DB_PASSWORD'].to_s
        @endpoint['password'] = password unless password.empty? # in memory only, never in the file
        @dbms = @endpoint['dbms']
        @log = log
        # the Ruby worker driver the tier method's pages reuse: its catalog entry's page_driver
        @page_driver = config['page_driver'].to_s
        @connector = Registry.load(@page_driver)
        @session = Host.new(@page_driver, @connector, nil, log) # the worker's session: its open, its errors
        @steps = {}
        @random = Random.new # made in the Puma worker, after the fork: each process draws its own keys
      end

      # A driver object of the page driver's for one statement (its arguments' encoders, its last
      # result's columns); the process's connections are the session's.
      def statement(sql, mode, types, kind: 'exec', reads: true)
        Statement.new(Registry.load(@page_driver), kind, sql, mode, reads, types, @dbms)
      end

      # The process's one connection, opened as the worker's `open` opens it (Host#open: connect,
      # then describe — rb-pg reads the server's types for its results' decoders and its DateStyle,
      # rb-mysql2 checks that sessions start in autocommit): what every connection made later is
      # set up with. Steps with the persistent policy run on it; per-request ones leave it idle,
      # as the worker's per-request steps leave its session's.
      def connection
        @connector.conn || begin
          @session.handle({ 'op' => 'open', 'endpoint' => @endpoint })
          @connector.conn
        end
      end

      def step(id)
        @steps[id] ||= load_step(id)
      end

      # One operation i of an op step under its policy: its rows read, or the rows it changed.
      def run(step, i) = within(step) { |conn, kept| step.statement.op(conn, kept).call(step.step.args[i]) }

      # Operations 0 … count-1 in order under the step's policy, every value read checksummed:
      # the worker's own verification pass; the first `dump` rows read also answered as typed
      # values, to explain a mismatch.
      def verify(step, dump)
        op = ->(arg) { within(step) { |conn, kept| step.statement.op(conn, kept).call(arg) } }
        pass = step.step.dup
        pass.dump = dump
        Runner.new(step.statement.driver, @log).verify(op, pass).slice(*VERIFIED)
      end

      # One request of a TechEmpower test on a connection under the step's policy: the fortunes
      # (every row, the added one, sorted by message), or a World row per key (read; for updates
      # then given its number and written back, one statement per row, read again when
      # `read_back`, as the verify form does to show the write); and the request's time in the
      # driver — its connection got under the policy, its statements, their rows read — which the
      # page's Server-Timing tells apart from its own. The arguments are made before it, as the
      # worker makes its own before the clock.
      def test(step, keys, numbers, read_back: false)
        reads = step.read.args(step.page == 'fortunes' ? [[]] : keys.map { |k| [k] })
        writes = step.write ? step.write.args(numbers.zip(keys)) : []
        began = Clock.now
        rows = within(step) do |conn, kept|
          read = step.read.op(conn, kept)
          next read.call(reads.first) if step.page == 'fortunes'

          worlds = reads.map { |arg| read.call(arg).first }
          if step.write
            write = step.write.op(conn, kept)
            writes.each { |arg| write.call(arg) }
            worlds = worlds.zip(numbers).map { |(id, _), number| [id, number] }
            worlds = reads.map { |arg| read.call(arg).first } if read_back
          end
          worlds
        end
        db_ns = Clock.now - began
        if step.page == 'fortunes' # the page's own work, outside the driver
          rows << [0, ADDED]
          rows.sort_by! { |_, message| message }
        end
        [rows, db_ns]
      end

      # Requests 0 … count-1, each with the next `queries` keys (and numbers) the shared
      # generators made, every value read checksummed: the same reads in every language.
      def test_verify(step, dump)
        sum = Checksum.new(dump)
        width = 0
        q = step.queries
        n = step.count
        n.times do |i|
          at = step.keys.empty? ? [] : Array.new(q) { |k| (i * q + k) % n }
          numbers = step.numbers.empty? ? [] : step.numbers.values_at(*at)
          rows, = test(step, step.keys.values_at(*at), numbers, read_back: true)
          kinds = step.read.driver.kinds
          rows.each { |row| sum.add_row(row, kinds) }
          width = step.read.driver.width || width
        end
        answer = { 'n' => n, 'rows' => sum.rows, 'values' => sum.rows * width, 'checksum' => sum.hex }
        answer['dump'] = sum.dumped if dump.positive?
        answer
      end

      private

      def load_step(id)
        spec = JSON.parse(File.read(File.join(@steps_dir, "#{id}.json")))
        step = TESTS.include?(spec['page']) ? TestStep.new(spec, self) : OpStep.new(spec, self)
        connection # the process's connection, made before the step's first operation is timed
        step
      rescue Errno::ENOENT
        raise NoStep, id
      end

      # `yield conn, kept` on a connection under the step's policy: per-request connects and
      # disconnects around it (nothing outlives the request: the statements it prepared are
      # released, the connection closed), persistent runs on the process's connection.
      def within(step)
        if step.policy == 'per-request'
          conn = @connector.connect
          begin
            yield conn, false
          ensure
            step.statements.each { |s| s.driver.release(conn) }
            @connector.disconnect(conn)
          end
        else
          conn = connection
          begin
            yield conn, true
          rescue StandardError => e
            @connector.recover(conn) if @connector.db_error?(e) # the connection stays usable for the next request
            raise
          end
        end
      end
    end

    # The Rack application: one object per process (made before the fork, its Tier after it,
    # by the first request that needs one).
    class App
      def initialize
        @tier = nil
        @log = ->(text) { warn "abworker-ruby web: #{text}" } # Puma's stderr: the app server's log
      end

      def call(env)
        began = Clock.now # the page's first moment (its Server-Timing app time)
        path = env['PATH_INFO']
        case path
        when '/op' then op_page(Rack::Request.new(env).GET)
        when '/hello' then answer(200, 'text/plain', HELLO)
        when '/static.html' then answer(200, 'text/html', STATIC)
        else
          page = path.delete_prefix('/')
          return answer(404, 'text/plain', "not found\n") unless TESTS.include?(page)

          test_page(page, Rack::Request.new(env).GET, began)
        end
      end

      private

      # made again by a later request if this one failed
      def tier = @tier ||= Tier.new(@log)

      def op_page(query)
        id = query['step'].to_s
        connect = query['connect'] == '1'
        verify = connect || query['verify'] == '1' # both answer JSON
        if connect # the host's open: the process's connection made as the worker's open makes it (and kept)
          tier.connection
          return answer(200, JSON_TYPE, '{"ok": true}')
        end
        step = op_step(id)
        return answer(200, JSON_TYPE, JSON.generate(tier.verify(step, query['dump'].to_i))) if verify

        # one operation, its argument row drawn at random: the processes share no counter
        result = tier.run(step, tier.random.rand(step.step.args.length))
        answer(200, 'text/plain', "rows=#{step.step.reads ? result.length : result}")
      rescue NoStep
        answer(404, 'text/plain', "no step #{id.inspect}\n")
      rescue StandardError => e
        failed(e, verify)
      end

      def op_step(id)
        step = STEP_ID.match?(id) && tier.step(id)
        step.is_a?(OpStep) ? step : raise(NoStep, id)
      end

      # A TechEmpower test (tier/tfb.py): keys and numbers drawn at random per query from the
      # parameter's range, as the test's rules ask; `&verify=1` answers the checksum of the shared
      # generators' keys instead. Its answer says where its time went: in the driver, and in the
      # whole page.
      def test_page(page, query, began)
        id = query['step'].to_s
        verify = query['verify'] == '1'
        step = STEP_ID.match?(id) && tier.step(id)
        raise NoStep, id unless step.is_a?(TestStep) && step.page == page
        return answer(200, JSON_TYPE, JSON.generate(tier.test_verify(step, query['dump'].to_i))) if verify

        random = tier.random
        keys = page == 'fortunes' ? [] : Array.new(step.queries) { random.rand(step.range) }
        numbers = page == 'updates' ? keys.map { random.rand(step.range) } : []
        rows, db_ns = tier.test(step, keys, numbers)
        type, body = if page == 'fortunes' then [HTML_TYPE, fortunes_page(rows)]
                     else
                       worlds = rows.map { |key, number| { 'id' => key, 'randomNumber' => number } }
                       [JSON_TYPE, JSON.generate(page == 'db' ? worlds.first : worlds)]
                     end
        answer(200, type, body, 'Server-Timing' => server_timing(db_ns, Clock.now - began))
      rescue NoStep
        answer(404, 'text/plain', "no #{page} step #{id.inspect}\n")
      rescue StandardError => e
        failed(e, verify)
      end

      # TechEmpower's template, each message escaped by Ruby's own CGI.escapeHTML (& < > " ')
      def fortunes_page(rows)
        cells = rows.map { |key, message| "<tr><td>#{key}</td><td>#{CGI.escapeHTML(message)}</td></tr>" }.join
        '<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>' \
          "<tr><th>id</th><th>message</th></tr>#{cells}</table></body></html>"
      end

      # The page's Server-Timing value (tier/tfb.py): its time in the driver and in the whole
      # page, in milliseconds to the microsecond.
      def server_timing(db_ns, app_ns) = format('db;dur=%.3f, app;dur=%.3f', db_ns / 1e6, app_ns / 1e6)

      # A 500: the error as the worker answers it (Host#error_answer: its kind, the driver's
      # message's first line, the SQLSTATE) — as JSON for a verify (or connect) form, else its
      # message alone.
      def failed(error, verify)
        session = @tier&.session || Host.new('web', nil, nil, @log)
        err = session.error_answer(error)['error']
        return answer(500, JSON_TYPE, JSON.generate({ 'error' => err })) if verify

        answer(500, 'text/plain', "#{err['message']}\n")
      end

      def answer(status, type, body, headers = {})
        [status, { 'Content-Type' => type, 'Content-Length' => body.bytesize.to_s, **headers }, [body]]
      end
    end
  end
end
