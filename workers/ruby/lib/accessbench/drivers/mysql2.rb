# frozen_string_literal: true

require 'bigdecimal'
require 'date'
require 'mysql2'
require_relative '../checksum'
require_relative '../driver'
require_relative '../loading'
require_relative '../sqltext'
require_relative 'mariadb'

module Accessbench
  module Drivers
    # rb-mysql2: mysql2 (Debian's ruby-mysql2) on libmariadb, on MariaDB.
    #
    #   literal   client.query(text)                   COM_QUERY, the text protocol, values inlined
    #   extended  client.prepare(sql), execute(*args), close — every operation: COM_STMT_PREPARE,
    #             COM_STMT_EXECUTE, COM_STMT_CLOSE (the binary protocol, prepared every time)
    #   prepared  client.prepare(sql) in the first operation on a connection, then execute(*args)
    #
    # Values read are mysql2's own (`cast`): every value checksummed by its Ruby class. DECIMAL
    # comes as BigDecimal (Kernel#BigDecimal of the server's text: its scale's trailing zeros
    # lost, and the text protocol reads a DECIMAL of scale 0 as an Integer), so a step reading
    # one answers `unsupported` at verification (checksum.rb) and `deviations` says so.
    class Mysql2Driver < Driver
      # every query's and statement's result options (mysql2 merges them into each)
      QUERY = { as: :array, cast: true, cast_booleans: false, symbolize_keys: false, database_timezone: :utc,
                application_timezone: nil, cache_rows: true, stream: false }.freeze

      # Each type as mysql2 binds a Ruby value (statement.c): Integer → LONGLONG, true/false →
      # TINY 1/0, Float → DOUBLE, BigDecimal → NEWDECIMAL (its text), String → STRING, Date →
      # DATE, a UTC Time → DATETIME with its microseconds; bytes are an ASCII-8BIT String, which
      # mysql2 also sends as STRING (it has no BLOB binding): the server converts them.
      BIND = {
        'decimal' => ->(v) { BigDecimal(v.text) },
        'date' => ->(v) { Date.jd(v.days + Checksum::EPOCH_JD) },
        'timestamp' => ->(v) { Time.at(*v.us.divmod(1_000_000), :usec, in: 'UTC') }
      }.freeze

      DECIMAL = 'read as BigDecimal by mysql2 0.5.3 (Kernel#BigDecimal of the text: the scale\'s trailing zeros ' \
                'lost, 12.50 as 12.5; a scale-0 DECIMAL of the text protocol as Integer): a step reading one ' \
                'answers unsupported at verification'

      def driver_name = 'mysql2'
      def driver_version = "#{Mysql2::VERSION} (libmariadb #{Mysql2::Client.info[:version]})"
      def dbms = ['mariadb']
      def deviations = { 'mariadb' => { 'decimal' => DECIMAL } }

      def batch_style
        'one transaction per group: BEGIN, statement.execute per row (prepared once per connection), COMMIT'
      end

      def settings
        {
          'connection' => 'Mysql2::Client.new: host and port, or socket; username, password, database; encoding ' \
                          'utf8mb4; flags: the defaults | FOUND_ROWS (rows matched); reconnect false; ' \
                          'connect_attrs: mysql2\'s program_name',
          'tls' => Mariadb::TLS_SETTING,
          'compress' => Mariadb::COMPRESS_SETTING,
          'read_only' => Mariadb::READ_ONLY_SETTING,
          'autocommit' => 'the server\'s default, on (checked at open); mysql2 sends nothing; BEGIN/COMMIT explicit',
          'interpolation' => 'none: mysql2 has no client-side placeholders; literal texts are made by this worker',
          'literal' => "client.query(text): COM_QUERY, values inlined by this worker (strings with ' and \\ doubled, " \
                       "doubles in exponent form, dates as 'YYYY-MM-DD', bytes as X'…')",
          'extended' => 'client.prepare(sql), statement.execute(*args), statement.close, every operation: ' \
                        'COM_STMT_PREPARE, COM_STMT_EXECUTE, COM_STMT_CLOSE — the binary protocol, prepared every time',
          'prepared' => 'client.prepare(sql) inside the first operation on a connection (COM_STMT_PREPARE), then ' \
                        'statement.execute(*args) (COM_STMT_EXECUTE); statement.close after the step (untimed)',
          'statement cache' => 'none in mysql2',
          'scan' => 'client.query(sql): the text protocol, the whole result stored (mysql_store_result)',
          'parameters' => 'Ruby values bound by mysql2 by their class: integers as Integer (LONGLONG), booleans as ' \
                          'true/false (TINY 1/0), doubles as Float (DOUBLE), decimals as BigDecimal (NEWDECIMAL, ' \
                          'its to_s text), text as a UTF-8 String (STRING), dates as Date (DATE), timestamps as a UTC ' \
                          'Time (DATETIME with microseconds), bytes as an ASCII-8BIT String (STRING: mysql2 has no ' \
                          'BLOB binding, the server converts), NULL as nil (MYSQL_TYPE_NULL); made before the clock',
          'results' => 'as: :array, cache_rows (every row built into Ruby values when the result is read), cast: ' \
                       'integers → Integer, DOUBLE → Float, DECIMAL → BigDecimal (see deviations), DATE → Date, ' \
                       'DATETIME/TIMESTAMP → Time in UTC (database_timezone: :utc: the stored wall clock, ' \
                       'microseconds kept), TIME → a Time on 2000-01-01 (read as a timestamp: mysql2 0.5.3 gives no ' \
                       'column types to tell), strings → UTF-8 String, binary strings → ASCII-8BIT String; ' \
                       'cast_booleans: false (BOOLEAN is TINYINT(1): an Integer); FLOAT columns in the binary ' \
                       'protocol are the float32 widened',
          'rows changed' => 'client.affected_rows / statement.affected_rows (matched rows, with FOUND_ROWS)',
          'per-request' => "Mysql2::Client.new with the session's options (the init command too), the operation (a " \
                           'prepared step prepares on it), client.close (COM_QUIT) — inside the operation\'s time',
          'pooled' => 'not built: mysql2 has no pool',
          'load' => Loading::HAND_WRITTEN
        }
      end

      # ---- connections ------------------------------------------------------------------------

      def endpoint=(ep)
        @ep = ep
        @options = Mariadb.options(ep, QUERY)
      end

      def connect = Mariadb.encrypted!(Mysql2::Client.new(@options), @ep)
      def describe(client) = (@described = Mariadb.describe(client, @ep))

      def disconnect(client)
        release(client)
        client.close
      end

      def server_pid = conn ? @described['server_pid'] : 0

      # ---- steps --------------------------------------------------------------------------------

      def adapt(rows, types) = Driver.convert_rows(rows, types, BIND)

      def width = @last&.fields&.length

      def scan_op(sql, client) = counting(->(_) { read(client.query(sql)) }) { 1 }

      def exec_op(sql, mode, reads, client)
        done = reads ? method(:read) : ->(_) { client.affected_rows }
        op = case mode
             when 'literal' then ->(text) { done.call(client.query(text)) }
             when 'extended' then extended_op(sql, reads, client)
             else prepared_op(sql, reads, client)
             end
        counting(op) { 1 }
      end

      def batch_op(sql, client)
        stmt = nil
        op = lambda do |group|
          client.query('BEGIN')
          stmt ||= keep(client, client.prepare(sql))
          group.each { |args| stmt.execute(*args) }
          client.query('COMMIT')
          group.length
        end
        counting(op) { |group| group.length + 2 }
      end

      # load steps: each statement as the extended mode runs it; a value read binds by its class
      def load? = true

      def load_statements(client)
        query = ->(sql, args) { once(client, sql, args) { |_, result| [read(result), nil] } }
        LoadStatements.new(query, ->(v) { v })
      end

      def txn_begin(client) = client.query('BEGIN')
      def txn_commit(client) = client.query('COMMIT')

      def recover(client)
        client.query('ROLLBACK') if client && !client.closed? # nothing to undo in autocommit: a no-op then
      end

      def end_step
        release_all
        @last = nil
      end

      def db_error?(error) = Mariadb.db_error?(error)
      def error_message(error) = Mariadb.error_message(error)
      def sqlstate(error) = Mariadb.sqlstate(error)

      private

      # every row of a result (nil: the statement read none)
      def read(result)
        @last = result
        result ? result.to_a : []
      end

      # a statement's result: rows, or the rows it changed
      def outcome(stmt, result, reads) = reads ? read(result) : stmt.affected_rows

      def extended_op(sql, reads, client)
        ->(args) { once(client, sql, args) { |stmt, result| outcome(stmt, result, reads) } }
      end

      # the extended mode's statement: prepared, executed and closed
      def once(client, sql, args)
        stmt = client.prepare(sql)
        begin
          yield stmt, stmt.execute(*args)
        ensure
          stmt.close
        end
      end

      def prepared_op(sql, reads, client)
        stmt = nil
        lambda do |args|
          stmt ||= keep(client, client.prepare(sql)) # inside the first operation's time
          outcome(stmt, stmt.execute(*args), reads)
        end
      end
    end
  end
end
