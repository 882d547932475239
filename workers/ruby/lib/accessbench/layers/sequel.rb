# frozen_string_literal: true

require 'sequel'
require_relative '../driver'
require_relative '../loading'
require_relative '../drivers/pg'
require_relative '../drivers/mysql2'
require_relative '../drivers/sqlite3'
require_relative 'layer'
require_relative 'over'
require_relative 'sequel_query'

# Times read and written as UTC (the values the bare drivers read), for every Sequel method of
# this process.
Sequel.default_timezone = :utc

module Accessbench
  module Drivers
    # rb-sequel+pg, rb-sequel+mysql2, rb-sequel+sqlite3: Sequel 5.63 (Debian's ruby-sequel)
    # over the same gem as the bare method, connected as it connects. Statements are datasets
    # (layers/sequel_query.rb); Sequel::Model only for load steps (one_to_many; lazy association
    # reads, eager, eager_graph). A "connection" here is a Sequel::Database of one connection
    # (single-threaded pool, max_connections 1).
    #
    #   literal   the dataset built with the values in every operation: Sequel inlines them
    #             (its literalization; Sequel's default way of running anything)
    #   extended  a dataset of placeholders (:$p0 …) built once, dataset.call(type, values):
    #             Sequel's bound variables, the statement bound but not kept
    #   prepared  dataset.prepare(type, name) once, then ps.call(values): prepared at the
    #             first call on the connection and kept
    class SequelLayer < Driver
      POOL = { single_threaded: true, max_connections: 1, keep_reference: false, test: true }.freeze
      CALL = { 'select' => :select, 'insert' => :insert, 'update' => :update, 'delete' => :delete }.freeze

      def driver_name = 'Sequel'
      def layer_version = "sequel #{Sequel::VERSION}"
      def load? = true
      def binds_literals? = true
      def width = @width
      def shapes = Layers.shapes

      # ---- connections ----------------------------------------------------------------------------

      # a Database of one connection, made now (test: true connects)
      def connect = Sequel.connect(options.merge(POOL))

      def describe(db)
        db.server_version if db.respond_to?(:server_version) # asked once now (MariaDB: a query), not in an operation
        @models = {}
        @described = db.synchronize { |raw| raw_describe(raw) }
      end

      def disconnect(db) = db.disconnect
      def server_pid = conn && @described ? @described['server_pid'].to_i : 0

      # ---- steps ------------------------------------------------------------------------------------

      # the bare driver's values, bytes as Sequel's blobs (a plain String is text to Sequel)
      def adapt(rows, types)
        blob = types.map { |t| t == 'bytes' }
        driver_values(rows, types).map { |row| row.each_with_index.map { |v, k| blob[k] && v ? Sequel.blob(v) : v } }
      end

      def adapt_literals(rows, types) = adapt(rows, types)

      def scan_op(sql, db) = statement_op(sql, 'literal', true, db)

      def exec_op(sql, mode, reads, db) = statement_op(sql, mode, reads, db)

      def batch_op(_sql, db)
        s = mapped
        unless s && s['kind'] == 'insert'
          raise Unsupported, 'Sequel: a batch is dataset.import of an insert; this statement is not one'
        end

        ds = db[s['table'].to_sym]
        columns = s['columns'].map(&:to_sym)
        hook(db)
        ->(group) { ds.import(columns, group) && group.length }
      end

      def load_op(plan, db)
        s = mapped or raise Unsupported, "Sequel: a load's parents are a select of a table of the suite"
        parent = model(db, s['table'], s['key'])
        chain = relations(db, plan, parent)
        names = chain.map(&:last)
        tree = names.reverse.reduce { |inner, name| { name => inner } }
        eager = { 'lazy' => nil, 'joined' => :eager_graph, 'selectin' => :eager }.fetch(plan.strategy)
        where = query(db, s, qualify: true)
        columns = ([plan.columns] + plan.levels.map(&:columns)).map { |cs| cs.map(&:to_sym) }
        hook(db) # once the models are made (their schema read)
        lambda do |args|
          ds = where.filtered(parent.dataset, args)
          ds = ds.public_send(eager, tree) if eager
          Layers.entities(ds.all, names, columns)
        end
      end

      def txn_begin(db) = quietly { db.run('BEGIN') }
      def txn_commit(db) = quietly { db.run('COMMIT') }

      def recover(db)
        db&.run('ROLLBACK')
      rescue Sequel::DatabaseError
        nil # no transaction was open
      end

      def end_step
        @hooked&.each { |db| db.loggers.delete(@logger) }
        @hooked = @logger = @hook = nil
      end

      private

      # a verification pass counts what Sequel logs at its SQL level (a logger of its own,
      # added for the pass only: without loggers Sequel skips logging altogether)
      def hook(db)
        return unless counter

        @hook ||= Layers::Hook.new(counter)
        @logger ||= SqlCounter.new(@hook)
        @hooked ||= []
        return if @hooked.include?(db) # per request: every new Database gets it

        @hooked << db
        db.loggers << @logger
      end

      def quietly(&block) = @hook ? @hook.quietly(&block) : yield

      # the step's shape when every table it names is a table of the suite; nil sends the
      # statement through the raw-SQL API
      def mapped = Layers.of_the_suite(shape)

      def query(db, s, qualify: false) = Layers::SequelQuery.new(db, s, like: like, qualify: qualify)
      def like = :like

      def statement_op(sql, mode, reads, db)
        s = mapped
        return raw_op(sql, mode, reads, db).tap { hook(db) } unless s

        q = query(db, s)
        @width = s['kind'] == 'select' ? s['items'].length : nil
        db.primary_key(q.table) if s['kind'] == 'insert' && db.database_type == :postgres # for its RETURNING, now
        op = mode == 'literal' ? literal_op(q, s, reads) : bound_op(q, s, mode, reads, db)
        hook(db) # once what the statement needs is read (its table's key)
        return op unless counter && reads

        scales = Layers.scales(s)
        ->(args) { Layers.canonical(op.call(args), scales) } # verification only: decimals with their scale
      end

      # the dataset built with the values in every operation
      def literal_op(q, s, reads)
        case s['kind']
        when 'select' then counted(reads) { |args| q.dataset(args).map(&:values) }
        when 'insert'
          columns = q.insert_columns
          ds = q.dataset([])
          ->(args) { ds.insert(columns, args) && 1 }
        when 'update' then ->(args) { q.dataset(args).update(q.updates(args)) }
        else ->(args) { q.dataset(args).delete }
        end
      end

      # a select's rows, or (a select run without fetching) how many it read
      def counted(reads, &rows) = reads ? rows : ->(args) { rows.call(args).length }

      # a dataset of placeholders built once: call (extended) or prepare (prepared)
      def bound_op(q, s, mode, reads, db)
        n = Layers.markers(s)
        keys = Layers::SequelQuery.keys(n)
        vals = Layers::SequelQuery.placeholders(n)
        type = CALL.fetch(s['kind'])
        extra = bound_values(q, s, vals)
        ds = q.dataset(vals)
        run = if mode == 'prepared'
                ps = ds.prepare(type, :"abw#{@names = @names.to_i + 1}", *extra)
                ->(h) { ps.call(h) }
              else
                ->(h) { ds.call(type, h, *extra) }
              end
        result_of(s, reads) { |args| run.call(keys.zip(args).to_h) }
      end

      # the values an insert or update sets (placeholders)
      def bound_values(q, s, vals)
        case s['kind']
        when 'insert' then [q.insert_columns.zip(vals).to_h]
        when 'update' then [q.updates(vals)]
        else []
        end
      end

      def result_of(s, reads)
        case s['kind']
        when 'select' then counted(reads) { |args| yield(args).map(&:values) }
        when 'insert' then ->(args) { yield(args) && 1 }
        else ->(args) { yield(args) }
        end
      end

      # a statement of no shape: DB[sql, *values] (Sequel inlines the values), literal only
      def raw_op(sql, mode, reads, db)
        self.api = 'raw'
        if mode != 'literal'
          raise Unsupported, 'Sequel runs a statement of no shape as DB[sql, *values], which inlines the values: ' \
                             'literal mode only'
        end

        return ->(args) { db[sql, *args.to_a].update } unless reads

        lambda do |args|
          rows = db[sql, *args.to_a].map(&:values)
          @width = rows.first&.length || @width
          rows
        end
      end

      # ---- loads ------------------------------------------------------------------------------------

      # a Sequel::Model of a table on this Database (its schema read when it is made, untimed)
      def model(db, table, key)
        @models[[db, table]] ||= Class.new(Sequel::Model(db[table.to_sym])) do
          set_primary_key(key.length == 1 ? key.first.to_sym : key.map(&:to_sym))
        end
      end

      # each level's one_to_many from the level above: [[model, association], …]
      def relations(db, plan, parent)
        above = parent
        plan.levels.map do |level|
          child = model(db, level.table, level.key)
          name = :"#{level.table}_by_#{level.column}"
          unless above.association_reflection(name)
            above.one_to_many name, class: child, key: level.column.to_sym, primary_key: level.parent_column.to_sym
          end
          link = [above, name]
          above = child
          link
        end
      end

      def common_settings
        {
          'layer' => "Sequel #{Sequel::VERSION} (Debian's ruby-sequel), no sequel_pg",
          'database' => 'a Sequel::Database per connection: single_threaded: true, max_connections: 1 (one ' \
                        'connection, no pool thread), keep_reference: false, test: true (connected when made); ' \
                        'Sequel.default_timezone = :utc',
          'statements' => 'datasets built from the step\'s shape: DB[:t].where(hash for ANDed equalities, else ' \
                          'Sequel.& / Sequel.| of =, !=, <, <=, >, >=, a range for BETWEEN (>= AND <=), an array ' \
                          'for IN, nil for IS [NOT] NULL, Sequel.like), join / left_join on the references, ' \
                          'select of columns or Sequel.function aggregates (a repeated name aliased), group, order ' \
                          '(Sequel.desc), limit, offset; a read by key as any select (Sequel\'s first adds LIMIT 1 and, ' \
                          'prepared on SQLite, leaves its statement unfinished, holding a read lock); insert ' \
                          '(columns, values), update(hash; a column plus a value as Sequel[c] + v), delete; never ' \
                          'Sequel.lit; rows read as Sequel\'s hashes (their values)',
          'literal' => 'Sequel\'s default: the dataset built with the values in every operation, Sequel literalizing ' \
                       'them into the SQL text',
          'extended' => 'a dataset of placeholders (:$p0 …) built once per step, dataset.call(type, values) per ' \
                        'operation: Sequel\'s bound variables, not kept',
          'prepared' => 'dataset.prepare(type, name) once per step, ps.call(values) per operation: prepared at the ' \
                        'first call on the connection (inside the first operation) and kept; never released by ' \
                        'Sequel before the connection closes',
          'scan' => 'the dataset as the literal mode runs it',
          'batch' => 'dataset.import(columns, rows): one multi-row INSERT, inside Sequel\'s own transaction',
          'load' => 'Sequel::Model per table (its schema read when made, untimed), one_to_many from each level to the ' \
                    'next: lazy = the parents\' dataset.all, then each parent\'s association read (a SELECT per ' \
                    'parent and per child); joined = eager_graph(children: :grandchildren) (one SELECT of LEFT ' \
                    'OUTER JOINs); selectin = eager(children: :grandchildren) (a SELECT … IN per level)',
          'statement count' => 'a logger of Sequel\'s (info: each SQL it runs; PREPARE counted) added to the ' \
                               'Database for a verification pass only and removed after it',
          'raw' => 'a statement of no shape: DB[sql, *values].all / .update (Sequel inlines the values), literal ' \
                   'mode only, answered as api raw',
          'commit_every' => 'BEGIN and COMMIT by db.run (Sequel\'s transaction is a block, which cannot span the ' \
                            'host\'s operations)',
          'per-request' => 'Sequel.connect(…) (a new Database and its connection, with its connection set-up), the ' \
                           'operation, db.disconnect — inside the operation\'s time',
          'pooled' => 'not built: one client per process; Sequel\'s pool is used with one connection'
        }
      end

      # Counts what Sequel logs at its SQL log level (info)
      class SqlCounter
        def initialize(hook)
          @hook = hook
        end

        def info(_message) = @hook.count
        def debug(_message) = nil
        def warn(_message) = nil
        def error(_message) = nil
      end
    end

    class SequelPg < SequelLayer
      include Layers::OverPg

      # Sequel's type map for bound values encodes a Float by ruby-pg 1.4.5's TextEncoder::Float,
      # which writes 2.5e-300 as 0e-301 and drops a 17th digit: pinned to rb-pg's Float#to_s
      # encoder, so a double binds exactly (as in rb-pg)
      require 'sequel/adapters/postgres'
      Sequel::Postgres::PG_QUERY_TYPE_MAP[Float] = PgTypes::FloatText.new

      def modes = %w[literal extended prepared]
      def batch_style = 'dataset.import(columns, rows): one multi-row INSERT in Sequel\'s transaction (BEGIN/COMMIT)'
      def options = { adapter: 'postgres', driver_options: @libpq }
      def deviations = { 'postgresql' => { 'numeric' => Layers::RAW_DECIMAL } }

      def settings
        common_settings.merge(over_settings).merge(
          'adapter' => "Sequel's postgres adapter over ruby-pg (driver_options: rb-pg's libpq keywords); on every " \
                       "connection it sets standard_conforming_strings, client_min_messages and DateStyle ISO; " \
                       'results decoded by its conversion procs (numeric as BigDecimal, timestamp as UTC Time, ' \
                       'bytea as Sequel::SQL::Blob); bound values by Sequel\'s type map for queries, its Float ' \
                       'encoder replaced by rb-pg\'s Float#to_s one (ruby-pg 1.4.5\'s TextEncoder::Float drops a ' \
                       '17th digit and writes 2.5e-300 as 0e-301)',
          'literal' => "#{common_settings['literal']}: conn.async_exec(text), the simple query protocol",
          'extended' => "#{common_settings['extended']}: async_exec_params, an unnamed statement parsed every time",
          'prepared' => "#{common_settings['prepared']}: conn.prepare(name, sql) then exec_prepared"
        )
      end
    end

    class SequelMysql2 < SequelLayer
      include Layers::OverMysql2

      def modes = %w[literal extended prepared]
      def batch_style = 'dataset.import(columns, rows): one multi-row INSERT in Sequel\'s transaction (BEGIN/COMMIT)'
      def like = :ilike # Sequel.like writes LIKE BINARY on MariaDB; ilike is the plain LIKE the statement has
      def deviations = { 'mariadb' => { 'decimal' => Layers::RAW_DECIMAL } }

      # fractional_seconds: timestamps with their microseconds (Sequel drops them on MySQL otherwise)
      def options
        { adapter: 'mysql2', fractional_seconds: true, **@mysql2 }
      end

      def connect
        db = super
        db.convert_tinyint_to_bool = false # BOOLEAN (TINYINT(1)) as the integer it is, as rb-mysql2
        db
      end

      def settings
        common_settings.merge(over_settings).merge(
          'adapter' => "Sequel's mysql2 adapter (rb-mysql2's options, FOUND_ROWS); on every connection it sends SET " \
                       'NAMES utf8mb4, wait_timeout and SQL_AUTO_IS_NULL=0; convert_tinyint_to_bool = false; ' \
                       'fractional_seconds: true (else Sequel writes timestamps without their microseconds); LIKE as ' \
                       'Sequel.ilike (Sequel.like would write LIKE BINARY)',
          'literal' => "#{common_settings['literal']}: COM_QUERY",
          'extended' => "#{common_settings['extended']}: mysql2 prepare, execute, close (COM_STMT_PREPARE, " \
                        'COM_STMT_EXECUTE, COM_STMT_CLOSE)',
          'prepared' => "#{common_settings['prepared']}: mysql2 prepare once, execute"
        )
      end
    end

    class SequelSqlite3 < SequelLayer
      include Layers::OverSqlite3

      def modes = %w[literal extended prepared]
      def batch_style = 'dataset.import(columns, rows): one multi-row INSERT in Sequel\'s transaction (BEGIN/COMMIT)'

      def options
        { adapter: 'sqlite', database: @file, readonly: @read_only, timeout: 5000, foreign_keys: false,
          case_sensitive_like: false }
      end

      def settings
        common_settings.merge(over_settings).merge(
          'adapter' => "Sequel's sqlite adapter over sqlite3-ruby, busy timeout 5000 ms; its connection pragmas " \
                       'pinned to SQLite\'s defaults (foreign_keys: false, case_sensitive_like: false: LIKE as the ' \
                       'statement has it); values converted by the columns\' declared types (the targets declare ' \
                       'TEXT, INTEGER, REAL, BLOB: as sqlite3-ruby reads them)',
          'literal' => "#{common_settings['literal']}: prepared, stepped and closed",
          'extended' => "#{common_settings['extended']}: prepared, bound, stepped and closed",
          'prepared' => "#{common_settings['prepared']}: prepared once, then reset, bound and stepped"
        )
      end
    end
  end
end
