# frozen_string_literal: true

require_relative 'errors'

# Loading associations (protocol/PROTOCOL.md, "Loading associations"): a `load` step reads a
# parent table's rows and, level by level, the rows of each child table referencing the level
# above (users → posts → comments). One operation is one whole load; it answers every entity it
# read, each once (by its table's key), as rows of its table's columns in order.
#
# The three strategies a programmer writes by hand, written once here for every driver:
#   lazy      the parents' statement, then the level's `one` statement for each distinct value
#             of the referenced column read at the level above (N+1);
#   selectin  the parents' statement, then one `in` statement per level over the distinct
#             values read above (none when the level above read no rows);
#   joined    the one `joined` statement, each row split by the levels' column counts.
# The driver supplies them (Driver#load_statements): `query` (sql, params → [rows, kinds], in its
# extended mode) and `bind` (a value read → its parameter); the statements are counted here as they are sent (the
# verification pass's counter only).
module Accessbench
  module Loading
    STRATEGIES = %w[lazy joined selectin].freeze
    LEVEL_FIELDS = %w[table column parent_column one in table_columns table_types key].freeze

    Plan = Struct.new(:strategy, :sql, :columns, :key, :levels, :joined, keyword_init: true)
    # (table, column, parent_column: what a layer relates the level by)
    Level = Struct.new(:columns, :key, :one, :in, :above, :table, :column, :parent_column, keyword_init: true)

    # One operation's entities: the rows (each entity once, level after level), and per level
    # [count, kinds] for the checksum (`length` is the rows', as any op's result)
    Entities = Struct.new(:rows, :levels) do
      def length = rows.length
    end

    HAND_WRITTEN = 'hand-written, as a programmer writes each strategy (loading.rb, one implementation for every ' \
                   "driver): lazy = the parents' statement, then the message's `one` statement per parent and per " \
                   'child (N+1); selectin = the parents, then one `in` statement per level over the distinct keys ' \
                   "read; joined = the message's one LEFT JOIN statement, each row split by the levels' column " \
                   'counts, each entity kept once by its key; each statement as the extended mode runs it; ' \
                   'counted by this code as it sends them (verification pass)'

    module_function

    def plan(msg, shape)
      load = msg['load']
      raise ProtocolError, 'a load step needs load: {strategy, levels, joined}' unless load.is_a?(Hash)
      raise ProtocolError, "unknown load strategy #{load['strategy'].inspect}" unless STRATEGIES.include?(load['strategy'])
      unless shape.is_a?(Hash) && shape['table_columns'].is_a?(Array) && shape['key'].is_a?(Array)
        raise ProtocolError, "a load step's shape is the select of its parents' table (table_columns, key)"
      end
      raise ProtocolError, 'load.levels must be a non-empty list' unless load['levels'].is_a?(Array) && load['levels'].any?

      Plan.new(strategy: load['strategy'], sql: msg['sql'], columns: shape['table_columns'], key: shape['key'],
               levels: levels(load['levels'], shape['table_columns']), joined: load['joined'])
    end

    def levels(specs, above)
      specs.map do |l|
        missing = LEVEL_FIELDS.find { |f| !l.key?(f) }
        raise ProtocolError, "load.levels[]: missing field '#{missing}'" if missing

        at = above.index(l['parent_column']) or
          raise ProtocolError, "load: #{l['parent_column']} is not a column of the level above"
        above = l['table_columns']
        Level.new(columns: l['table_columns'], key: l['key'], one: l['one'], in: l['in'], above: at,
                  table: l['table'], column: l['column'], parent_column: l['parent_column'])
      end
    end

    # the op of a load step: `query` and `bind` from the driver (Driver#load_statements)
    def op(plan, statements, counter)
      counter.on = true if counter
      run = lambda do |sql, params|
        counter.n += 1 if counter
        statements.query.call(sql, params)
      end
      strategy = method(plan.strategy)
      ->(args) { entities(strategy.call(plan, args, run, statements.bind)) }
    end

    # [[rows, kinds], …] per level → Entities
    def entities(parts)
      Entities.new(parts.flat_map(&:first), parts.map { |rows, kinds| [rows.length, kinds] })
    end

    # the distinct non-NULL values of column `at`, in the order first read
    def distinct(rows, at) = rows.map { |r| r[at] }.compact.uniq

    def lazy(plan, args, query, bind)
      parts = [query.call(plan.sql, args)]
      plan.levels.each_with_index do |level, k|
        rows = []
        kinds = nil
        distinct(parts[k].first, level.above).each do |value|
          found, kinds = query.call(level.one, [bind.call(value)])
          rows.concat(found)
        end
        parts << [rows, kinds]
      end
      parts
    end

    def selectin(plan, args, query, bind)
      parts = [query.call(plan.sql, args)]
      plan.levels.each_with_index do |level, k|
        values = distinct(parts[k].first, level.above)
        head, tail = level.in
        parts << (values.empty? ? [[], nil] : query.call("#{head}#{(['?'] * values.length).join(', ')}#{tail}",
                                                          values.map(&bind)))
      end
      parts
    end

    # joined rows → each level's entities, each once by its key (none where its key is NULL)
    def joined(plan, args, query, _bind)
      rows, kinds = query.call(plan.joined, args)
      all = [plan.columns] + plan.levels.map(&:columns)
      keys = [plan.key] + plan.levels.map(&:key)
      from = 0
      all.each_with_index.map do |columns, k|
        at = keys[k].map { |c| from + columns.index(c) }
        found = rows.reject { |row| at.any? { |i| row[i].nil? } }.uniq { |row| at.map { |i| row[i] } }
        part = [found.map { |row| row[from, columns.length] }, kinds && kinds[from, columns.length]]
        from += columns.length
        part
      end
    end
  end
end
