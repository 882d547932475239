# frozen_string_literal: true

require 'sqlite3'
require_relative '../driver'
require_relative '../loading'
require_relative '../values'

module Accessbench
  module Drivers
    # rb-sqlite3: sqlite3-ruby (the sqlite3 gem, Debian's ruby-sqlite3) on the system's SQLite.
    #
    #   literal   db.execute(text): prepare, step to the end, close — every operation
    #   extended  db.prepare(sql), execute!(*args), close — every operation
    #   prepared  db.prepare(sql) in the first operation, then execute!(*args) (reset, bind, step)
    #
    # One client per worker process (the API blocks the process); per request a Database is
    # opened and closed inside every operation. SQLite types values, not columns: every value
    # read is checksummed by its Ruby class (Integer, Float, String UTF-8 or ASCII-8BIT blob).
    class Sqlite3Driver < Driver
      BUSY_TIMEOUT_MS = 5000 # as c-sqlite and Python's sqlite3

      # Each type as SQLite keeps it (protocol/PROTOCOL.md, Types; the data loader writes them so):
      # booleans as integers 1/0 (the gem binds no true/false), decimals, dates and timestamps as
      # their text, bytes as an ASCII-8BIT String (bound as a blob), the rest as they are.
      BIND = {
        'bool' => ->(v) { v ? 1 : 0 },
        'decimal' => ->(v) { v.text },
        'date' => ->(v) { v.iso },
        'timestamp' => ->(v) { v.iso(' ') }
      }.freeze

      def driver_name = 'sqlite3'
      def driver_version = "#{SQLite3::VERSION} (SQLite #{SQLite3::SQLITE_VERSION})"
      def dbms = ['sqlite']

      def batch_style
        'one transaction per group: BEGIN, one prepared statement (prepared in the first group) execute! per row, ' \
          'COMMIT'
      end

      def settings
        {
          'open' => "SQLite3::Database.new(file): sqlite3_open_v2 READWRITE|CREATE (the system's libsqlite3 " \
                    "#{SQLite3::SQLITE_VERSION}), busy_timeout = #{BUSY_TIMEOUT_MS} ms (as c-sqlite and Python's " \
                    'sqlite3); no pragmas: SQLite\'s defaults; results_as_hash and type_translation off',
          'read_only' => 'endpoint read_only: SQLite3::Database.new(file, readonly: true): sqlite3_open_v2 ' \
                         "SQLITE_OPEN_READONLY, for every connection (open's, a connect step's, per-request's), so " \
                         'SQLite refuses writes (SQLITE_READONLY); absent or false: read-write',
          'autocommit' => 'yes (BEGIN/COMMIT explicit)',
          'literal' => 'db.execute(text): the gem prepares, steps to the end and closes the statement, every operation',
          'extended' => 'db.prepare(sql), statement.execute!(*args), statement.close, every operation',
          'prepared' => 'db.prepare(sql) inside the first operation, then statement.execute!(*args) (reset, bind, ' \
                        'step to the end); closed after the step (untimed)',
          'statement cache' => 'none in the gem',
          'scan' => 'db.execute(sql): prepared, stepped and closed every operation',
          'results' => 'rows as Arrays, read to the end; INTEGER → Integer, REAL → Float, TEXT → String (UTF-8), ' \
                       'BLOB → String (ASCII-8BIT), NULL → nil, by each value\'s storage class',
          'parameters' => 'integers as Integer (sqlite3_bind_int64), booleans as 1/0 (the gem binds no true/false), ' \
                          'doubles as Float, text as a UTF-8 String, bytes as an ASCII-8BIT String (a blob), ' \
                          "decimals, dates and timestamps as their text ('YYYY-MM-DD HH:MM:SS[.ffffff]'; SQLite has " \
                          'no such types: as the target stores them), NULL as nil; converted before the clock',
          'rows changed' => 'db.changes after a statement that returns no columns; 0 after one that does',
          'load' => Loading::HAND_WRITTEN
        }
      end

      def endpoint=(ep)
        raise ProtocolError, 'the sqlite endpoint needs a file' unless ep['file'].is_a?(String)

        @file = ep['file']
        @options = ep['read_only'] == true ? { readonly: true } : {}
      end

      def connect
        db = SQLite3::Database.new(@file, @options)
        db.busy_timeout = BUSY_TIMEOUT_MS
        db
      end

      def describe(_db) = { 'server_version' => SQLite3::SQLITE_VERSION }

      # a connection's prepared statements are finalized first (SQLite will not close under them)
      def disconnect(db)
        release(db)
        db.close
      end

      def adapt(rows, types) = Driver.convert_rows(rows, types, BIND)

      def width = @width

      def scan_op(sql, db) = ->(_) { read(db, db.prepare(sql), [], true, close: true) }

      def exec_op(sql, mode, reads, db)
        op = case mode
             when 'literal' then ->(text) { read(db, db.prepare(text), [], reads, close: true) }
             when 'extended' then ->(args) { read(db, db.prepare(sql), args, reads, close: true) }
             else prepared_op(sql, reads, db)
             end
        counting(op) { 1 }
      end

      def batch_op(sql, db)
        stmt = nil
        op = lambda do |group|
          db.execute('BEGIN')
          stmt ||= keep(db, db.prepare(sql))
          group.each { |args| stmt.execute!(*args) }
          db.execute('COMMIT')
          group.length
        end
        counting(op) { |group| group.length + 2 }
      end

      # load steps: each statement as the extended mode runs it; a value read binds as it is
      def load? = true

      def load_statements(db)
        LoadStatements.new(->(sql, args) { [read(db, db.prepare(sql), args, true, close: true), nil] }, ->(v) { v })
      end

      def txn_begin(db) = db.execute('BEGIN')
      def txn_commit(db) = db.execute('COMMIT')

      def recover(db)
        db.execute('ROLLBACK') if db && !db.closed? && db.transaction_active?
      end

      def end_step = release_all

      def db_error?(error) = error.is_a?(SQLite3::Exception)

      # SQLite's result code by name (SQLITE_READONLY), as Python's sqlite_errorname
      def sqlstate(error)
        codes = SQLite3::Constants::ErrorCode
        name = codes.constants.find { |c| codes.const_get(c) == error.code }
        name && "SQLITE_#{name}"
      end

      private

      def prepared_op(sql, reads, db)
        stmt = nil
        ->(args) { read(db, stmt ||= keep(db, db.prepare(sql)), args, reads) } # parsed inside the first operation's time
      end

      # one statement run to the end: its rows (reads), or the rows it changed
      def read(db, stmt, args, reads, close: false)
        rows = stmt.execute!(*args)
        @width = stmt.column_count
        return rows if reads

        stmt.column_count.zero? ? db.changes : 0
      ensure
        stmt.close if close && !stmt.closed?
      end
    end
  end
end
