# frozen_string_literal: true

require 'sequel'
require_relative 'layer'

module Accessbench
  module Layers
    # A shape (protocol/PROTOCOL.md, Shapes) as a Sequel dataset: DB[:table] with where
    # (a hash for the plain form, else Sequel's expressions: Sequel.&, Sequel.|, the inequality
    # operators, a range for BETWEEN, an array for IN, nil for IS NULL, Sequel.like), join /
    # left_join on the suite's references, group, order (Sequel.desc), limit, offset, and
    # select of columns or Sequel.function aggregates. Never Sequel.lit.
    #
    # `dataset(vals)` builds it from `vals`, one per marker of the statement: the operation's
    # values (literal mode: Sequel inlines them, and the dataset is built in every operation as
    # an application builds it), or the placeholders :$p0, :$p1 … (extended and prepared: built
    # once, then `call`ed or `prepare`d with a hash of the values).
    class SequelQuery
      COMPARE = { '<' => :<, '<=' => :<=, '>' => :>, '>=' => :>= }.freeze

      def initialize(db, shape, like: :like, qualify: false)
        @db = db
        @shape = shape
        @like = like # Sequel.like writes LIKE BINARY on MariaDB: there Sequel.ilike is the plain LIKE
        @qualify = qualify || !shape['joins'].to_a.empty?
      end

      def self.placeholders(n) = Array.new(n) { |i| :"$p#{i}" }
      def self.keys(n) = Array.new(n) { |i| :"p#{i}" }

      def table = @shape['table'].to_sym

      def col(ref) = @qualify ? Sequel[ref['table'].to_sym][ref['column'].to_sym] : ref['column'].to_sym

      # the dataset of a select, update or delete (its condition, and a select's joins,
      # columns, group, order and page)
      def dataset(vals)
        ds = @db[table]
        ds = joined(ds) if @shape['kind'] == 'select'
        ds = filtered(ds, vals)
        @shape['kind'] == 'select' ? selected(ds, vals) : ds
      end

      # update's hash: a column to a value, or to itself plus a value
      def updates(vals)
        @shape['set'].to_h do |a|
          v = value(a['arg'], vals)
          [a['column'].to_sym, a['op'] == '+' ? Sequel[a['column'].to_sym] + v : v]
        end
      end

      def insert_columns = @shape['columns'].map(&:to_sym)

      # the dataset with the shape's condition
      def filtered(ds, vals)
        filter = @shape['filter'] or return ds
        plain = @shape['where']
        return ds.where(filter_terms(filter).to_h { |t| [col(t['column']), value(t['args'][0], vals)] }) if plain&.any?

        ds.where(condition(filter, vals))
      end

      private

      def value(o, vals) = o.key?('param') ? vals[o['param']] : o['value']

      def filter_terms(filter) = filter['and'] || [filter]

      def condition(term, vals)
        return Sequel.&(*term['and'].map { |t| condition(t, vals) }) if term['and']
        return Sequel.|(*term['or'].map { |t| condition(t, vals) }) if term['or']

        c = col(term['column'])
        args = term['args'].map { |o| value(o, vals) }
        case term['op']
        when '=' then Sequel::SQL::BooleanExpression.new(:'=', c, args[0])
        when '<>' then Sequel::SQL::BooleanExpression.new(:'!=', c, args[0])
        when 'in' then Sequel.expr(c => args)
        when 'between' then Sequel.expr(c => (args[0]..args[1]))
        when 'is null' then Sequel.expr(c => nil)
        when 'is not null' then Sequel.~(c => nil)
        when 'like' then Sequel.public_send(@like, c, args[0])
        else Sequel::SQL::BooleanExpression.new(COMPARE.fetch(term['op']), c, args[0])
        end
      end

      def joined(ds)
        @shape['joins'].to_a.reduce(ds) do |d, j|
          a, b = j['on']
          d.public_send(j['type'] == 'left' ? :left_join : :join, j['table'].to_sym, col(b) => col(a))
        end
      end

      def selected(ds, vals)
        ds = ds.select(*items) unless @shape['star'] && !@qualify
        ds = ds.group(*@shape['group'].map { |c| col(c) }) unless @shape['group'].to_a.empty?
        order = @shape['order'].to_a.map { |o| o['desc'] ? Sequel.desc(col(o)) : col(o) }
        ds = ds.order(*order) unless order.empty?
        ds = ds.limit(value(@shape['limit'], vals)) if @shape['limit']
        ds = ds.offset(value(@shape['offset'], vals)) if @shape['offset']
        ds
      end

      # the result columns, each aliased where its name would repeat (rows are hashes by name)
      def items
        list = @shape['items']
        names = list.map { |i| i['fn'] ? (i['as'] || i['fn']) : i['column'] }
        list.each_with_index.map do |item, k|
          expr = item['fn'] ? aggregate(item) : col(item)
          if item['as'] then Sequel.as(expr, item['as'].to_sym)
          elsif names.count(names[k]) > 1 then Sequel.as(expr, :"c#{k}")
          else expr
          end
        end
      end

      def aggregate(item)
        fn = Sequel.function(item['fn'].to_sym, *(item['column'] ? [col(item)] : []))
        item['column'] ? fn : fn.*
      end
    end
  end
end
