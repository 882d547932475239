# frozen_string_literal: true

require 'bigdecimal'
require_relative '../driver'
require_relative '../errors'
require_relative '../loading'
require_relative '../values'

module Accessbench
  # What both layer families (ActiveRecord, Sequel) share: the shape features they answer for,
  # the operands of a shape, the statements counted by a layer's own hook, and the rows of a
  # verification pass put in the bare driver's form. The driver under a layer is in over.rb.
  module Layers
    # every feature of protocol/PROTOCOL.md's Shapes (suite/shape.py FEATURES), in its order
    FEATURES = %w[select get where star compare between in null like or join left-join aggregate group order limit
                  offset insert update increment delete load-lazy load-joined load-selectin].freeze

    # capabilities.deviations of a layer over mysql2, whose DECIMALs read as BigDecimal
    RAW_DECIMAL = 'read as BigDecimal (no scale of its own): a shaped select gives it the scale the suite declares; ' \
                  'a statement of no shape (raw SQL) cannot, and answers unsupported at verification'

    module_function

    # capabilities.shapes: every feature mapped but those refused (feature → why)
    def shapes(refused = {})
      { 'maps' => FEATURES - refused.keys, 'unsupported' => refused }
    end

    # a shape every table of which (its own and the joined ones) is a table of the suite, which
    # a layer maps to its models; nil for any other (the statement then goes through its raw-SQL API)
    def of_the_suite(s)
      return nil unless s.is_a?(Hash) && s['tables'].is_a?(Hash)
      return nil unless ([s['table']] + s['joins'].to_a.map { |j| j['table'] }).all? { |t| s['tables'].key?(t) }

      s
    end

    # an operand of a shape ({"param": i} or {"value": v}) → a lambda of the op's arguments
    def operand(o)
      return ->(_args) { o['value'] } unless o.key?('param')

      i = o['param']
      ->(args) { args[i] }
    end

    # the result columns' decimal scales (a BigDecimal has none of its own: 12.50 reads as 12.5),
    # from the types the suite declares (`numeric(12,2)`): a column's, and min/max/sum of one
    # (the DBMS keeps the column's scale); nil for anything else (avg's scale is the DBMS's)
    def scales(shape)
      return [] unless shape.is_a?(Hash) && shape['kind'] == 'select'

      tables = shape['tables'] || {}
      shape['items'].map do |item|
        next nil if item['fn'] && !%w[min max sum].include?(item['fn'])

        info = tables[item['table']] or next nil
        at = info['columns'].index(item['column']) or next nil
        scale_of(info['types'][at])
      end
    end

    def scale_of(type)
      m = /\A\s*(?:numeric|decimal)\s*\(\s*\d+\s*(?:,\s*(\d+)\s*)?\)/i.match(type.to_s) or return nil
      m[1].to_i
    end

    # Verification only (never inside the clock): rows with each BigDecimal as the decimal text
    # the DBMS sends (the declared scale), which the checksum encodes; a BigDecimal of unknown
    # scale stays, and the checksum answers unsupported for it.
    def canonical(rows, scales)
      return rows unless scales.any?

      rows.map do |row|
        row.each_with_index.map do |v, k|
          v.is_a?(BigDecimal) && scales[k] ? Decimal.new(decimal_text(v, scales[k])) : v
        end
      end
    end

    def decimal_text(value, scale)
      text = value.round(scale).abs.to_s('F') # "12.5", "0.0", "12.0"
      whole, frac = text.split('.')
      digits = scale.positive? ? "#{whole}.#{frac.to_s.ljust(scale, '0')[0, scale]}" : whole
      value.negative? && !value.round(scale).zero? ? "-#{digits}" : digits
    end

    # A layer's own statement hook, counting into the verification pass's Counter. The hook is
    # installed once for the pass (never in a timed one) and removed after the step; BEGIN and
    # COMMIT of commit_every are counted by the host, so the hook is quiet while they run.
    class Hook
      def initialize(counter)
        @counter = counter
        @quiet = false
        counter.on = true
      end

      def count
        @counter.n += 1 unless @quiet
      end

      def quietly
        @quiet = true
        yield
      ensure
        @quiet = false
      end
    end

    # A load's entities (Loading::Entities), level by level: the parents, then each level read
    # through its association from every entity of the level above (a lazy load queries each
    # collection here; an eager one has it loaded); `columns` per level, as the records take
    # them (record[column])
    def entities(parents, associations, columns)
      level = parents
      parts = [[level.map { |e| columns[0].map { |c| e[c] } }, nil]]
      associations.each_with_index do |name, k|
        level = level.flat_map { |e| e.public_send(name).to_a }
        parts << [level.map { |e| columns[k + 1].map { |c| e[c] } }, nil]
      end
      Loading.entities(parts)
    end

    # how many markers a shape's statement has (its operands', or an insert's columns)
    def markers(shape)
      return shape['columns'].length if shape['kind'] == 'insert'

      found = []
      walk = lambda do |v|
        case v
        when Hash then v.key?('param') ? found << v['param'] : v.each_value(&walk)
        when Array then v.each(&walk)
        end
      end
      walk.call([shape['filter'], shape['set'], shape['limit'], shape['offset']])
      (found.max || -1) + 1
    end

    # The error a layer raised → the driver's own error under it (its `cause`), or nil
    def driver_error(error, klass)
      e = error
      while e
        return e if e.is_a?(klass)

        e = e.cause
      end
      nil
    end
  end
end
