# frozen_string_literal: true

require 'pg'
require_relative '../driver'
require_relative '../loading'
require_relative '../sqltext'
require_relative 'pg_types'
require_relative 'postgresql'

module Accessbench
  module Drivers
    # rb-pg: ruby-pg (the pg gem, Debian's ruby-pg) on libpq.
    #
    #   literal   conn.exec(text)                      simple query protocol (one Query message)
    #   extended  conn.exec_params(sql, args, 0, map)  unnamed statement: Parse (with the
    #             parameters' OIDs), Bind, Describe, Execute, Sync — parsed every time
    #   prepared  conn.prepare(name, sql, oids) in the first operation on a connection, then
    #             conn.exec_prepared(name, args, 0, map)
    #
    # Setting: batch=prepared (default: exec_prepared per row in a transaction) or batch=copy
    # (COPY … FROM STDIN through copy_data and PG::TextEncoder::CopyRow, in a transaction).
    class Pg < Driver
      BATCHES = %w[prepared copy].freeze

      @names = 0
      def self.next_name = (@names += 1)

      def initialize(method_name)
        super
        @batch = 'prepared'
        @prepared = [] # statement names prepared on the session's connection in this step
      end

      def configure(key, value)
        return super unless key == 'batch' && BATCHES.include?(value)

        @batch = value
      end

      def driver_name = 'pg'
      def driver_version = "#{PG::VERSION} (libpq #{Postgresql.version_text})"
      def dbms = ['postgresql']

      def batch_style
        if @batch == 'copy'
          return 'COPY … FROM STDIN per group (conn.copy_data with PG::TextEncoder::CopyRow), in a transaction'
        end

        'one transaction per group: BEGIN, exec_prepared per row (the statement prepared once per connection), COMMIT'
      end

      def settings
        {
          'connection' => 'PG::Connection.new(libpq keywords): host (a directory = unix socket dir), port, dbname, ' \
                          'user, password when given, client_encoding=UTF8, options=-c search_path=<schema> in the ' \
                          "startup packet; ruby-pg's default async API (connect_start/connect_poll, async_exec); " \
                          'DateStyle checked to be ISO at open (set once, and in later startup packets, if not)',
          'tls' => Postgresql::TLS_SETTING,
          'read_only' => Postgresql::READ_ONLY_SETTING,
          'literal' => 'conn.exec(text): simple query protocol (PQsendQuery), text results',
          'extended' => 'conn.exec_params(sql, args, 0, type map): unnamed statement, Parse with the parameters\' ' \
                        'OIDs + Bind + Describe + Execute + Sync, parsed every time',
          'prepared' => 'conn.prepare(name, sql, oids) inside the first operation on a connection (Parse + Sync), ' \
                        'then conn.exec_prepared(name, args, 0, type map); DEALLOCATE after the step (untimed)',
          'automatic preparation' => 'none: ruby-pg prepares only what prepare() names; no statement cache',
          'scan' => 'conn.exec(sql): simple query protocol, the whole result buffered by libpq',
          'parameters' => 'a PG::TypeMapByColumn of encoders built per step from the parameters\' types, each with ' \
                          "its OID (sent in Parse): int → TextEncoder::Integer (int8), bool → TextEncoder::Boolean, " \
                          'float → a Float#to_s encoder (float8; ruby-pg 1.4.5\'s TextEncoder::Float writes 2.5e-300 ' \
                          'as 0e-301), decimal → TextEncoder::Numeric of a BigDecimal (numeric), text → ' \
                          'TextEncoder::String (text), date → TextEncoder::Date of a Date, timestamp → ' \
                          'TextEncoder::TimestampWithoutTimeZone of a UTC Time (timestamp), bytes → ' \
                          'BinaryEncoder::Bytea (bytea, binary format); the Ruby values made before the clock, ' \
                          'encoded by the type map inside the operation',
          'results' => 'text format; conn.type_map_for_results = PG::BasicTypeMapForResults over a registry of ' \
                       "ruby-pg's default coders (built at open from pg_type, untimed), result.values decoding " \
                       'every value: int2/int4/int8/oid → Integer, float4/float8 → Float, bool → true/false, bytea → ' \
                       'String (ASCII-8BIT), date → Date, timestamptz → Time; replaced: numeric → String ' \
                       "(PostgreSQL's text: a BigDecimal keeps no scale), timestamp → TextDecoder::TimestampUtc (a " \
                       'UTC Time, not the process zone\'s), time → µs since midnight (Integer); other types → ' \
                       'their text; results left to the GC, as an application leaves them',
          'batch' => @batch,
          'rows changed' => 'result.cmd_tuples (from the command tag)',
          'per-request' => "PG::Connection.new with the session's keywords, the operation (a prepared step prepares " \
                           'on it), conn.close — inside the operation\'s time; the session\'s connection stays open, idle',
          'pooled' => 'not built: ruby-pg has no pool',
          'load' => Loading::HAND_WRITTEN
        }
      end

      # ---- connections ------------------------------------------------------------------------

      def endpoint=(ep)
        @conninfo = Postgresql.conninfo(ep)
        @results = nil # the results' type map, made at the first describe from this server's pg_type
      end

      def connect
        conn = PG::Connection.new(@conninfo)
        conn.type_map_for_results = @results if @results
        conn
      end

      def describe(conn)
        @results ||= PgTypes.results_map(conn)
        conn.type_map_for_results = @results
        iso_dates(conn)
        { 'server_pid' => conn.backend_pid, 'server_version' => conn.parameter_status('server_version') }
      end

      def disconnect(conn) = conn.close

      def server_pid = conn ? conn.backend_pid : 0

      # ---- steps --------------------------------------------------------------------------------

      def adapt(rows, types)
        @params = PgTypes.params_map(types)
        @types = types
        PgTypes.values(rows, types)
      end

      def kinds = @last && Array.new(@last.nfields) { |i| PgTypes::KIND[@last.ftype(i)] }
      def width = @last&.nfields

      def scan_op(sql, conn) = counting(->(_) { read(conn.exec(sql)) }) { 1 }

      def exec_op(sql, mode, reads, conn)
        done = reads ? method(:read) : :cmd_tuples.to_proc
        op = case mode
             when 'literal' then ->(text) { done.call(conn.exec(text)) }
             when 'extended' then extended_op(sql, done, conn)
             else prepared_op(sql, done, conn)
             end
        counting(op) { 1 }
      end

      def batch_op(sql, conn)
        return counting(copy_op(conn)) { 3 } if @batch == 'copy'

        run = prepared_op(sql, :cmd_tuples.to_proc, conn)
        op = lambda do |group|
          conn.exec('BEGIN')
          group.each { |args| run.call(args) }
          conn.exec('COMMIT')
          group.length
        end
        counting(op) { |group| group.length + 2 }
      end

      # load steps: each statement as the extended mode runs it, its parameters encoded by their
      # Ruby class (the parents' as adapted, a value read as it was decoded)
      def load? = true

      def load_statements(conn)
        query = lambda do |sql, args|
          result = conn.exec_params(SqlText.convert_markers(sql, :numeric), args, 0, PgTypes.map_for(args))
          [read(result), kinds]
        end
        LoadStatements.new(query, ->(v) { v })
      end

      def txn_begin(conn) = conn.exec('BEGIN')
      def txn_commit(conn) = conn.exec('COMMIT')

      def recover(conn)
        conn.exec('ROLLBACK') if conn && !conn.finished? && conn.transaction_status != PG::PQTRANS_IDLE
      end

      def end_step
        names = @prepared
        @prepared = []
        @last = nil
        names.each { |name| conn.exec("DEALLOCATE #{name}") } if conn
      end

      def db_error?(error) = Postgresql.db_error?(error)
      def error_message(error) = Postgresql.error_message(error)
      def sqlstate(error) = Postgresql.sqlstate(error)

      private

      # the decoders need ISO dates: a server set otherwise is told so, now and at every later startup
      def iso_dates(conn)
        return if conn.parameter_status('DateStyle').to_s.start_with?('ISO')

        conn.exec('SET DateStyle = ISO')
        @conninfo[:options] = [@conninfo[:options], '-c DateStyle=ISO'].compact.join(' ')
      end

      # every row of a result, each value decoded by the results' type map
      def read(result)
        @last = result
        result.values
      end

      def extended_op(sql, done, conn)
        text = SqlText.convert_markers(sql, :numeric)
        params = @params
        ->(args) { done.call(conn.exec_params(text, args, 0, params)) }
      end

      # a name of its own (unique in the process); prepared inside the first operation on each connection
      def prepared_op(sql, done, conn)
        text = SqlText.convert_markers(sql, :numeric)
        params = @params
        oids = params.coders.map(&:oid)
        name = nil
        lambda do |args|
          name ||= prepare(conn, text, oids)
          done.call(conn.exec_prepared(name, args, 0, params))
        end
      end

      # named by a count of the process's, not the object's: the web tier's pages (web.rb) keep a
      # driver object per statement, and their statements share the process's connection
      def prepare(conn, text, oids)
        name = "abw_#{Pg.next_name}"
        conn.prepare(name, text, oids)
        @prepared << name if conn.equal?(self.conn)
        name
      end

      # COPY … FROM STDIN, the table and columns from the step's insert shape (made before the clock)
      def copy_op(conn)
        shape = self.shape
        unless shape.is_a?(Hash) && shape['kind'] == 'insert'
          raise Unsupported, 'batch=copy writes by COPY the table and columns of an insert shape; this statement has none'
        end

        ident = PG::TextEncoder::Identifier.new
        columns = shape['columns'].map { |c| ident.encode(c) }.join(', ')
        copy = "COPY #{ident.encode(shape['table'])} (#{columns}) FROM STDIN"
        rows = PG::TextEncoder::CopyRow.new(type_map: PgTypes.copy_map(@types))
        lambda do |group|
          conn.exec('BEGIN')
          conn.copy_data(copy, rows) { group.each { |values| conn.put_copy_data(values) } }
          conn.exec('COMMIT')
          group.length
        end
      end
    end
  end
end
