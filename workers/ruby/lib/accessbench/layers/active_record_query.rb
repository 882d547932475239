# frozen_string_literal: true

require 'active_record'
require_relative 'layer'

module Accessbench
  module Layers
    # A shape (protocol/PROTOCOL.md, Shapes) as ActiveRecord calls, made into lambdas once per
    # step: each takes the operation's arguments and builds the relation then — inside the
    # clock, as an application builds its query on every request. The plain condition (ANDed
    # equalities) is where(column: value); anything richer is one Arel node, each operand a
    # bind of the column's type (predicate_builder.build_bind_attribute, what where(hash)
    # makes) and each literal quoted by Arel; joins through the models' associations (joins,
    # left_joins); order, group, limit, offset as the relation's own.
    class ArQuery
      COMPARE = { '=' => :eq, '<>' => :not_eq, '<' => :lt, '<=' => :lteq, '>' => :gt, '>=' => :gteq }.freeze
      AGGREGATE = { 'count' => :count, 'sum' => :sum, 'min' => :minimum, 'max' => :maximum, 'avg' => :average }.freeze

      attr_reader :main

      def initialize(models, shape)
        @models = models
        @shape = shape
        @main = models.of(shape['table'])
      end

      def attr(ref) = @models.of(ref['table']).arel_table[ref['column']]

      # ->(relation, args) → the relation with the shape's condition
      def where
        filter = @shape['filter']
        return ->(rel, _) { rel } if filter.nil?

        if (pairs = self.pairs)
          return ->(rel, args) { rel.where(pairs.to_h { |c, i| [c, args[i]] }) }
        end
        node = condition(filter)
        ->(rel, args) { rel.where(node.call(args)) }
      end

      # the plain condition (ANDed column = marker) as [column, marker] pairs, or nil
      def pairs
        plain = @shape['where']
        filter = @shape['filter']
        return nil if filter.nil? || plain.nil? || plain.empty?

        (filter['and'] || [filter]).map { |t| [t['column']['column'], t['args'][0]['param']] }
      end

      # the condition tree → ->(args) → an Arel node
      def condition(term)
        return joined(term['and'], ->(ns) { Arel::Nodes::And.new(ns) }) if term['and']
        return joined(term['or'], method(:any)) if term['or']

        comparison(term)
      end

      def comparison(term)
        col = attr(term['column'])
        ops = term['args'].map { |o| operand(term['column'], o) }
        case term['op']
        when 'in' then ->(args) { col.in(ops.map { |o| o.call(args) }) }
        when 'is null' then ->(_) { col.eq(nil) }
        when 'is not null' then ->(_) { col.not_eq(nil) }
        when 'like' then ->(args) { col.matches(ops[0].call(args), nil, true) } # case sensitive: LIKE, never ILIKE
        when 'between'
          ->(args) { Arel::Nodes::Between.new(col, Arel::Nodes::And.new(ops.map { |o| o.call(args) })) }
        else
          m = COMPARE.fetch(term['op'])
          ->(args) { col.public_send(m, ops[0].call(args)) }
        end
      end

      # a marker → a bind of its column's type; a literal → quoted by Arel (in the SQL text)
      def operand(ref, o)
        unless o.key?('param')
          node = Arel::Nodes.build_quoted(o['value'], attr(ref))
          return ->(_) { node }
        end
        builder = @models.of(ref['table']).predicate_builder
        column = ref['column']
        i = o['param']
        ->(args) { builder.build_bind_attribute(column, args[i]) }
      end

      # ->(relation, args) → the relation joined, grouped, ordered and paged as the shape says
      def rest
        steps = [joins, group, order, page('limit'), page('offset')].compact
        ->(rel, args) { steps.reduce(rel) { |r, s| s.call(r, args) } }
      end

      # what a select's result columns are, as pluck takes them
      def items
        @shape['items'].map do |item|
          next attr(item) unless item['fn']

          target = item['column'] ? attr(item) : Arel.star
          node = target.public_send(item['fn'] == 'count' ? :count : AGGREGATE.fetch(item['fn']))
          item['as'] ? node.as(item['as']) : node
        end
      end

      # a select read as entities: columns of its one table, no aggregate, no group, no join
      def entities?
        @shape['joins'].to_a.empty? && @shape['group'].to_a.empty? &&
          @shape['items'].all? { |i| !i['fn'] && i['table'] == @shape['table'] }
      end

      # the one aggregate of a select without group or join: [its calculation method, the
      # column (nil: count(*))] (sum excepted: ActiveRecord's sum answers 0 where SQL answers NULL)
      def calculation
        items = @shape['items']
        return nil unless items.length == 1 && items[0]['fn'] && %w[count min max avg].include?(items[0]['fn'])
        return nil unless @shape['group'].to_a.empty? && @shape['joins'].to_a.empty?

        [AGGREGATE.fetch(items[0]['fn']), items[0]['column']]
      end

      private

      # (a OR b OR c), as Arel nests it
      def any(nodes) = Arel::Nodes::Grouping.new(nodes.reduce { |a, b| Arel::Nodes::Or.new(a, b) })

      def joined(terms, make)
        parts = terms.map { |t| condition(t) }
        ->(args) { make.call(parts.map { |p| p.call(args) }) }
      end

      # the joins as association trees from the main model (joins / left_joins)
      def joins
        list = @shape['joins'].to_a
        return nil if list.empty?

        trees = { 'inner' => [], 'left' => [] }
        list.each { |j| trees.fetch(j['type']) << association(j) }
        inner = trees['inner']
        left = trees['left']
        ->(rel, _) { (inner.empty? ? rel : rel.joins(*inner)).then { |r| left.empty? ? r : r.left_joins(*left) } }
      end

      # a join of the main table's: its association's name (a join from another joined table
      # would be a nested tree, which no suite has)
      def association(join)
        from, to = join['on']
        unless from['table'] == @shape['table']
          raise Unsupported, "ActiveRecord: a join from #{from['table']} (not the main table) would nest associations"
        end

        @models.association(from, to) or
          raise Unsupported, "ActiveRecord: no association from #{from['table']}.#{from['column']} to #{to['table']}"
      end

      def group
        cols = @shape['group'].to_a.map { |c| attr(c) }
        cols.empty? ? nil : ->(rel, _) { rel.group(*cols) }
      end

      def order
        nodes = @shape['order'].to_a.map { |o| o['desc'] ? attr(o).desc : attr(o).asc }
        nodes.empty? ? nil : ->(rel, _) { rel.order(*nodes) }
      end

      def page(which)
        o = @shape[which] or return nil
        value = Layers.operand(o)
        ->(rel, args) { rel.public_send(which, value.call(args)) }
      end
    end
  end
end
