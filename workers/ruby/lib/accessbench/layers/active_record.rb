# frozen_string_literal: true

require 'active_record'
require_relative '../driver'
require_relative '../loading'
require_relative '../drivers/pg'
require_relative '../drivers/mysql2'
require_relative '../drivers/sqlite3'
require_relative 'active_record_models'
require_relative 'active_record_query'
require_relative 'layer'
require_relative 'over'

require 'active_record/connection_adapters/mysql2_adapter'

# Pinned for every ActiveRecord method of this process: no log, times as UTC Times (the values
# the bare drivers read), BOOLEAN of MariaDB read as the integer it is (as rb-mysql2 reads it).
ActiveRecord::Base.logger = nil
ActiveRecord::Base.default_timezone = :utc
ActiveRecord::Base.time_zone_aware_attributes = false
ActiveRecord::ConnectionAdapters::Mysql2Adapter.emulate_booleans = false

module Accessbench
  module Drivers
    # rb-activerecord+pg, rb-activerecord+mysql2, rb-activerecord+sqlite3: ActiveRecord 6.1
    # (Debian's ruby-activerecord) over the same gem, connected as the bare method connects.
    # Models are defined at run time from the step's shape (layers/active_record_models.rb);
    # each operation builds its relation as an application does (layers/active_record_query.rb):
    # find_by for a read by key, where/order/limit/offset/joins/left_joins/group and
    # count/minimum/maximum/average/pluck for the other selects, create! for an insert,
    # update_all and delete_all, insert_all! for a batch; loads through has_many.
    #
    # A "connection" here is one ConnectionHandler with its own pool of one connection
    # (ArConn): the models use it through ActiveRecord::Base.connection_handler, set when an op
    # is built on it. Modes: prepared = the adapter's prepared_statements: true (its statement
    # cache); literal = the same connection inside connection.unprepared_statement { } (Arel
    # inlines every value); extended: unsupported (no setting binds without preparing).
    class ActiveRecordLayer < Driver
      ArConn = Struct.new(:handler, :adapter)
      OWNER = 'ActiveRecord::Base'

      def driver_name = 'ActiveRecord'
      def layer_version = "activerecord #{ActiveRecord::VERSION::STRING}"
      def modes = %w[literal prepared]
      def load? = true
      def binds_literals? = true
      def width = @width
      def shapes = Layers.shapes

      # ---- connections ----------------------------------------------------------------------------

      # a handler with one pool of one connection, checked out (connected) now
      def connect
        handler = ActiveRecord::ConnectionAdapters::ConnectionHandler.new
        handler.establish_connection(config.merge(POOL))
        ArConn.new(handler, handler.retrieve_connection(OWNER))
      end

      POOL = { pool: 1, checkout_timeout: 5, reaping_frequency: 0, idle_timeout: 0, prepared_statements: true }.freeze

      def describe(conn)
        @models = Layers::ArModels.new
        @described = raw_describe(conn.adapter.raw_connection)
      end

      def disconnect(conn) = conn.handler.remove_connection_pool(OWNER)
      def server_pid = conn && @described ? @described['server_pid'].to_i : 0

      # ---- steps ------------------------------------------------------------------------------------

      # the bare driver's values; an insert's as the attributes hash create!/insert_all! take
      def adapt(rows, types)
        values = driver_values(rows, types)
        return values unless shape.is_a?(Hash) && shape['kind'] == 'insert'

        columns = shape['columns']
        values.map { |row| columns.zip(row).to_h }
      end

      def adapt_literals(rows, types) = adapt(rows, types)

      def scan_op(sql, conn) = counted(read_op(sql, conn))

      def exec_op(sql, mode, reads, conn)
        op = reads ? read_op(sql, conn) : write_op(sql, conn)
        raise Unsupported, raw_modes if api == 'raw' && mode != 'literal'
        return counted(op) unless mode == 'literal'

        adapter = conn.adapter
        counted(->(args) { adapter.unprepared_statement { op.call(args) } })
      end

      def batch_op(_sql, conn)
        use(conn)
        model = mapped&.then { |s| s['kind'] == 'insert' ? @models.of(s['table']) : nil }
        raise Unsupported, 'ActiveRecord: a batch is insert_all! of an insert; this statement is not one' unless model

        counted(->(group) { model.transaction { model.insert_all!(group) } && group.length })
      end

      def load_op(plan, conn)
        use(conn)
        shape = mapped or raise Unsupported, "ActiveRecord: a load's parents are a select of a table of the suite"
        query = Layers::ArQuery.new(@models, shape)
        chain = associations(plan, shape)
        strategy = { 'lazy' => nil, 'joined' => :eager_load, 'selectin' => :preload }.fetch(plan.strategy)
        relation = relation_of(query, strategy, chain)
        columns = [plan.columns] + plan.levels.map(&:columns)
        names = chain.map(&:last)
        counted(->(args) { Layers.entities(relation.call(args).to_a, names, columns) })
      end

      def txn_begin(conn) = quietly { conn.adapter.begin_transaction(joinable: true, _lazy: false) }
      def txn_commit(conn) = quietly { conn.adapter.commit_transaction }

      def recover(conn)
        adapter = conn&.adapter
        adapter.rollback_transaction while adapter&.transaction_open?
      end

      def end_step
        ActiveSupport::Notifications.unsubscribe(@subscription) if @subscription
        @subscription = @hook = nil
      end

      private

      # the models use this connection (its handler)
      def use(conn)
        ActiveRecord::Base.connection_handler = conn.handler
      end

      # a verification pass counts the statements of the op just built (the models are defined,
      # their schema read, before it is subscribed)
      def counted(op)
        return op unless counter && @hook.nil?

        hook = @hook = Layers::Hook.new(counter)
        @subscription = ActiveSupport::Notifications.subscribe('sql.active_record') do |*, payload|
          hook.count unless payload[:cached]
        end
        op
      end

      def quietly(&block) = @hook ? @hook.quietly(&block) : yield

      # the step's shape when every table it names is a table of the suite (its models then
      # defined, untimed); nil sends the statement through the raw-SQL API
      def mapped
        s = Layers.of_the_suite(shape) or return nil

        @models.define_all(s['tables'])
        s
      end

      def raw_modes
        'ActiveRecord runs a statement of no shape through sanitize_sql_array and select_all / exec_update, which ' \
          'inline its values: literal mode only'
      end

      def read_op(sql, conn)
        use(conn)
        s = mapped
        return raw_read(sql, conn) unless s && s['kind'] == 'select'

        @width = s['items'].length
        op = select_op(Layers::ArQuery.new(@models, s), s)
        return op unless counter

        scales = Layers.scales(s)
        ->(args) { Layers.canonical(op.call(args), scales) } # verification only: decimals with their scale
      end

      def select_op(q, s)
        main = q.main
        where = q.where
        rest = q.rest
        return find_by_op(q, s) if s['features'].include?('get') && q.entities? && q.pairs
        return entities_op(q, s) if q.entities?

        if (calc = q.calculation)
          name, column = calc
          return ->(args) { [[rest.call(where.call(main.all, args), args).public_send(name, *[column].compact)]] }
        end
        nodes = q.items
        one = nodes.length == 1
        ->(args) { rest.call(where.call(main.all, args), args).pluck(*nodes).then { |v| one ? v.map { |x| [x] } : v } }
      end

      def find_by_op(q, s)
        main = q.main
        pairs = q.pairs
        columns = s['items'].map { |i| i['column'] }
        star = s['star']
        lambda do |args|
          record = (star ? main : main.select(*columns)).find_by(pairs.to_h { |c, i| [c, args[i]] })
          record ? [columns.map { |c| record[c] }] : []
        end
      end

      def entities_op(q, s)
        main = q.main
        where = q.where
        rest = q.rest
        columns = s['items'].map { |i| i['column'] }
        star = s['star']
        lambda do |args|
          rel = rest.call(where.call(main.all, args), args)
          rel = rel.select(*columns) unless star
          rel.to_a.map { |record| columns.map { |c| record[c] } }
        end
      end

      def write_op(sql, conn)
        use(conn)
        s = mapped
        return raw_write(sql, conn) unless s && %w[insert update delete].include?(s['kind'])

        q = Layers::ArQuery.new(@models, s)
        main = q.main
        where = q.where
        case s['kind']
        when 'insert' then ->(attributes) { main.create!(attributes) && 1 }
        when 'update'
          sets = updates(main, s['set'])
          ->(args) { where.call(main.all, args).update_all(sets.call(args)) }
        else ->(args) { where.call(main.all, args).delete_all }
        end
      end

      # update_all's hash: a column to a value (bound), or to column + value (Arel)
      def updates(main, set)
        table = main.arel_table
        builder = main.predicate_builder
        parts = set.map do |a|
          c = a['column']
          value = Layers.operand(a['arg'])
          bind = a['arg'].key?('param') ? ->(args) { builder.build_bind_attribute(c, value.call(args)) } : value
          [c, a['op'] == '+' ? ->(args) { table[c] + bind.call(args) } : value]
        end
        ->(args) { parts.to_h { |c, v| [c, v.call(args)] } }
      end

      # ---- raw SQL: a statement of no shape ---------------------------------------------------------

      def raw_read(sql, conn)
        self.api = 'raw'
        adapter = conn.adapter
        lambda do |args|
          result = adapter.select_all(raw_text(sql, args))
          @width = result.columns.length
          values = result.cast_values
          @width == 1 ? values.map { |v| [v] } : values
        end
      end

      def raw_write(sql, conn)
        self.api = 'raw'
        adapter = conn.adapter
        ->(args) { adapter.exec_update(raw_text(sql, args)) }
      end

      def raw_text(sql, args) = args.nil? || args.empty? ? sql : ActiveRecord::Base.sanitize_sql_array([sql, *args])

      # ---- loads ------------------------------------------------------------------------------------

      # each level's has_many from the level above: [[model, association name], …]
      def associations(plan, shape)
        above = shape['table']
        plan.levels.map do |level|
          @models.define(level.table, level.key)
          name = @models.relate(above, level.parent_column, level.table, level.column)
          parent = @models.of(above)
          above = level.table
          [parent, name]
        end
      end

      # ->(args) → the parents' relation, with the strategy's eager loading of the whole chain
      def relation_of(query, strategy, chain)
        where = query.where
        main = query.main
        tree = chain.reverse.map(&:last).reduce { |inner, name| { name => inner } }
        ->(args) { where.call(main.all, args).then { |rel| strategy ? rel.public_send(strategy, tree) : rel } }
      end

      def common_settings
        {
          'layer' => "ActiveRecord #{ActiveRecord::VERSION::STRING} (Debian's ruby-activerecord), without Rails",
          'models' => 'one ActiveRecord::Base subclass per table of the suite, defined at run time from the ' \
                      "step's shape: self.table_name, self.primary_key (none for a composite key), no single-table " \
                      'inheritance; has_many / belongs_to from the suite\'s references; columns introspected when ' \
                      'the model is defined (untimed), so no operation asks the server for the schema',
          'connection' => 'a ConnectionHandler of its own per connection, establish_connection with pool: 1, ' \
                          'checkout_timeout: 5, reaping_frequency: 0 and idle_timeout: 0 (no reaper thread), the ' \
                          'connection checked out at connect; the models reach it through ' \
                          'ActiveRecord::Base.connection_handler (set before the clock)',
          'query cache' => 'off (ActiveRecord enables it only inside a Rails executor; never enabled here)',
          'reads' => 'select by key: Model.find_by(key: value) (its cached find_by statement), Model.select(columns)' \
                     '.find_by(key: value) for some of the columns; entity selects: ' \
                     'Model.where(...).order(...).limit(...).offset(...) (select(columns) unless *), each value read ' \
                     'through record[column]; joins: joins/left_joins(association); count/minimum/maximum/average ' \
                     'alone: the calculation; sum, aggregates with group and joined columns: pluck of Arel nodes; ' \
                     'the relation built in every operation',
          'conditions' => 'the plain form (ANDed column = ?) as where(column: value); anything richer as one Arel node ' \
                          '(eq, not_eq, lt, lteq, gt, gteq, Between, in, eq(nil), not_eq(nil), matches(…, nil, true) ' \
                          'for LIKE, And, Or), each marker a bind of its column\'s type ' \
                          '(predicate_builder.build_bind_attribute, what where(hash) makes), each literal quoted',
          'writes' => 'insert: Model.create!(attributes) (inside its own BEGIN/COMMIT, joined to commit_every\'s ' \
                      'transaction); update: where(...).update_all(column => value, or Arel column + value); ' \
                      'delete: where(...).delete_all',
          'batch' => 'Model.transaction { Model.insert_all!(rows) }: BEGIN, one multi-row INSERT (values inlined by ' \
                     'ActiveRecord), COMMIT',
          'load' => 'through has_many: lazy = the parents\' relation, then each parent\'s association read (a ' \
                    'SELECT per parent and per child); joined = eager_load(children: :grandchildren) (one SELECT ' \
                    'of LEFT OUTER JOINs); selectin = preload(children: :grandchildren) (a SELECT … IN per level)',
          'statement count' => 'an ActiveSupport::Notifications subscriber to sql.active_record (query-cache hits ' \
                               'excluded), subscribed for a verification pass only and unsubscribed after it',
          'raw' => 'a statement of no shape: connection.select_all / exec_update of sanitize_sql_array([sql, *values]) ' \
                   '(the values inlined by ActiveRecord), literal mode only, answered as api raw',
          'extended' => 'unsupported: ActiveRecord has no setting that binds without preparing (prepared_statements: ' \
                        'true prepares every select through its statement cache; false inlines the values)',
          'timezone' => 'ActiveRecord::Base.default_timezone = :utc, time_zone_aware_attributes false: timestamps as UTC ' \
                        'Times',
          'per-request' => 'a new handler, pool and connection (with what the adapter runs on every new connection), the ' \
                           'operation, the pool removed — inside the operation\'s time',
          'pooled' => 'not built: one client per process; ActiveRecord\'s pool is used with one connection'
        }
      end
    end

    class ActiveRecordPg < ActiveRecordLayer
      include Layers::OverPg

      def deviations = { 'postgresql' => { 'numeric' => Layers::RAW_DECIMAL } }

      def batch_style
        'Model.transaction { Model.insert_all!(rows) }: one multi-row INSERT … RETURNING "id", in BEGIN/COMMIT'
      end

      def config
        { adapter: 'postgresql', database: @ep['database'], **@libpq.except(:dbname) }
      end

      def settings
        common_settings.merge(over_settings).merge(
          'adapter' => "ActiveRecord's postgresql adapter over ruby-pg, connected with rb-pg's libpq keywords; on every " \
                       'new connection it sets client_min_messages, standard_conforming_strings, timezone UTC and ' \
                       'intervalstyle, and reads pg_type for its type map (inside connect)',
          'prepared' => 'prepared_statements: true: a select with binds is prepared at its first execution (named a1, ' \
                        'a2 …, ActiveRecord\'s statement pool of 1,000 per connection) and executed by exec_prepared; ' \
                        'writes (create!, update_all, delete_all) are never prepared by ActiveRecord 6.1: exec_params, ' \
                        'an unnamed statement parsed every time',
          'literal' => 'connection.unprepared_statement { }: Arel inlines every value; sent by exec_params(sql, []) — ' \
                       'the extended protocol with no parameters, an unnamed statement (the adapter never uses the ' \
                       'simple query protocol for a query)',
          'scan' => 'the relation without binds: exec_params(sql, []), unnamed, not prepared'
        )
      end
    end

    class ActiveRecordMysql2 < ActiveRecordLayer
      include Layers::OverMysql2

      def batch_style = 'Model.transaction { Model.insert_all!(rows) }: one multi-row INSERT, in BEGIN/COMMIT'
      def deviations = { 'mariadb' => { 'decimal' => Layers::RAW_DECIMAL } }

      def config = { adapter: 'mysql2', **@mysql2 }

      def settings
        common_settings.merge(over_settings).merge(
          'adapter' => "ActiveRecord's mysql2 adapter, connected with rb-mysql2's options (FOUND_ROWS kept: the " \
                       'adapter adds it too); on every new connection it sends SET NAMES utf8mb4, sql_mode + ' \
                       'STRICT_ALL_TABLES, sql_auto_is_null = 0, wait_timeout (inside connect); emulate_booleans = ' \
                       'false: BOOLEAN (TINYINT(1)) read as an integer, as rb-mysql2',
          'prepared' => 'prepared_statements: true (the adapter\'s default is false): a select with binds prepared at ' \
                        'its first execution and kept (COM_STMT_PREPARE once, COM_STMT_EXECUTE); a write: prepare, ' \
                        'execute, close every time (never cached by ActiveRecord 6.1)',
          'literal' => 'connection.unprepared_statement { }: Arel inlines every value; COM_QUERY',
          'scan' => 'the relation without binds: COM_QUERY'
        )
      end
    end

    class ActiveRecordSqlite3 < ActiveRecordLayer
      include Layers::OverSqlite3

      def batch_style = 'Model.transaction { Model.insert_all!(rows) }: one multi-row INSERT, in BEGIN/COMMIT'

      def config = { adapter: 'sqlite3', database: @file, readonly: @read_only, timeout: 5000 }

      def settings
        common_settings.merge(over_settings).merge(
          'adapter' => "ActiveRecord's sqlite3 adapter over sqlite3-ruby, the file opened as rb-sqlite3 opens it " \
                       '(readonly passed on), busy timeout 5000 ms; the adapter sends PRAGMA foreign_keys = ON on ' \
                       'every new connection',
          'prepared' => 'prepared_statements: true: a select with binds prepared at its first execution and kept ' \
                        '(ActiveRecord\'s statement pool); a write prepared, stepped and closed every time',
          'literal' => 'connection.unprepared_statement { }: Arel inlines every value; prepared, stepped and closed',
          'scan' => 'the relation without binds: prepared, stepped and closed'
        )
      end
    end
  end
end
