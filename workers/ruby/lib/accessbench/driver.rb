# frozen_string_literal: true

require_relative 'errors'
require_relative 'loading'

# The driver interface: what a driver module's class (a subclass of Driver, registered in
# registry.rb) implements, and all the host (host.rb, step.rb, runner.rb) uses of it; the host
# never looks at a driver's class.
#
# An op is one operation of a step: a lambda of one argument made before the clock (a
# parameter array in the driver's own form, a literal statement text, a batch group, or nil)
# returning the rows it read (an Array of row Arrays, every value decoded into a native value)
# or, for a statement that reads none, the number of rows it changed. A driver supplies
# operations only; the loops are the host's.
#
# A connection is whatever object the driver connects with (a PG::Connection, a
# Mysql2::Client, a SQLite3::Database); the op builders take the one they run on (the
# session's own, or a per-request one), so the host can run the same op builder on every
# connection a connection policy makes.
module Accessbench
  class Driver
    # the statements a verification pass's operations send, counted by the driver's code (or a
    # layer's hook); `on` once something counts
    Counter = Struct.new(:n, :on)

    attr_reader :method_name
    # the session's connection, set by the host after `open`
    attr_accessor :conn
    # What the step's statement does (protocol: `shape`), set by the host before the step's
    # parameters are adapted and its op is built; nil for a statement of no shape. A layer
    # builds its statement from it; a driver reads it only where a batch variant writes
    # otherwise than the statement (rb-pg's COPY: the insert's table and columns).
    attr_accessor :shape
    # Set by the host before a step's op is built: a Counter for the verification pass only
    # (nil for a timed one, so timed ops count nothing); `api` = 'raw' once a layer's op runs
    # the statement through its raw-SQL API.
    attr_accessor :counter, :api

    def initialize(method_name)
      @method_name = method_name
    end

    # ---- who it is: hello ----------------------------------------------------------------------

    # a `key=value` setting of the method name; anything unknown is Unsupported
    def configure(key, value)
      raise Unsupported, "#{method_name.split('/').first} has no setting #{key}=#{value}"
    end

    def driver_name = abstract(__method__)
    def driver_version = abstract(__method__)
    def dbms = abstract(__method__)
    def batch_style = abstract(__method__)
    # every pinned setting, in words (a mode it lacks: settings[mode] = "unsupported: …")
    def settings = abstract(__method__)
    def modes = %w[literal extended prepared]
    # the connection policies built: no Ruby driver here has a pool of its own
    def load_policies = %w[persistent per-request]
    # a layer's capabilities.shapes ({"maps" => [...], "unsupported" => {feature => why}})
    def shapes = nil
    # capabilities.deviations: per DBMS, the column types read otherwise than canonically
    def deviations = {}

    # ---- connections ------------------------------------------------------------------------------

    # the endpoint, read once at open (untimed): what connect needs, the TLS keys mapped (what
    # the driver cannot do raises Unsupported here)
    def endpoint=(ep)
      abstract(__method__)
    end

    # a new connection to the endpoint: what `open` times as connect_ns, and what a connect
    # step and a per-request operation do inside their time (nothing else is sent)
    def connect = abstract(__method__)

    # untimed, after `open`'s connect: {server_pid, server_version}
    def describe(conn) = abstract(__method__)

    def disconnect(conn) = abstract(__method__)

    # the backend (or serving thread) of the session's connection; 0: none to report
    def server_pid = 0

    # ---- steps: parameters before the clock, one op builder per step kind ------------------------

    # generated rows → the driver's parameter values, by the columns' types (values.rb)
    def adapt(rows, _types) = rows

    # a layer that inlines values itself in mode literal is given them rather than texts
    def binds_literals? = false
    def adapt_literals(_rows, _types) = abstract(__method__)

    def scan_op(_sql, _conn) = abstract(__method__)
    # mode literal (the op's argument is the statement text), extended or prepared
    def exec_op(_sql, _mode, _reads, _conn) = abstract(__method__)
    # one group of rows per operation, in one transaction of its own
    def batch_op(_sql, _conn) = abstract(__method__)

    # load steps (loading.rb): a driver that has them answers true and gives, for a connection,
    # the statements of its hand-written strategies as its extended mode runs them
    LoadStatements = Struct.new(:query, :bind) # query.call(sql, params) → [rows, kinds]; bind.call(value read)
    def load? = false
    def load_statements(_conn) = abstract(__method__)

    # a load step's op on a connection: the hand-written strategies over load_statements; a
    # layer loads through its own relations instead
    def load_op(plan, conn) = Loading.op(plan, load_statements(conn), @counter)

    # commit_every: BEGIN and COMMIT on a connection
    def txn_begin(_conn) = abstract(__method__)
    def txn_commit(_conn) = abstract(__method__)

    # the column kinds of the last rows read (checksum.rb; nil: by each value's class), and
    # their number
    def kinds = nil
    def width = abstract(__method__)

    # after every step, untimed: release what the step prepared on the session's connection
    def end_step; end

    # ---- errors -------------------------------------------------------------------------------------

    # answered as kind `db`
    def db_error?(_error) = false
    def error_message(error) = "#{error.class}: #{error.message}"
    def sqlstate(_error) = nil

    # after a db error: leave the connection usable (roll back an open transaction)
    def recover(_conn); end

    # generated rows → parameter values: each non-NULL value through its column type's converter
    # (`converters`: type → lambda; a type without one passes as generated)
    def self.convert_rows(rows, types, converters)
      convert = types.map { |t| converters[t] }
      rows.map { |row| row.each_with_index.map { |v, k| v.nil? || convert[k].nil? ? v : convert[k].call(v) } }
    end

    protected

    # The statements a step prepared to keep, by connection (compared by identity): closed after
    # the step (`end_step`) or before their connection closes (per request).
    def kept = @kept ||= {}.compare_by_identity

    def keep(conn, stmt)
      (kept[conn] ||= []) << stmt
      stmt
    end

    def release(conn)
      (kept.delete(conn) || []).each(&:close)
    end
    # the web tier's pages (web.rb) release a statement's driver object before closing a per-request
    # connection that another object of the same driver opened
    public :release

    def release_all = kept.keys.each { |conn| release(conn) }

    # A verification op that counts its statements (`per_op.call(arg)` for each operation);
    # the op as it is when nothing counts (timed passes).
    def counting(op, &per_op)
      counter = @counter
      return op if counter.nil?

      counter.on = true
      lambda do |arg|
        result = op.call(arg)
        counter.n += per_op.call(arg)
        result
      end
    end

    private

    def abstract(member)
      raise NotImplementedError, "#{self.class} does not implement #{member}"
    end
  end
end
