# frozen_string_literal: true

require 'active_record'

module Accessbench
  module Layers
    # The classes the models are named under (an association names its class by its constant).
    module ArTables; end

    # ActiveRecord models defined at run time from the suite's tables as a step's shape gives
    # them (`tables`: columns, key, references; a load's levels): one class per table, with
    # self.table_name, self.primary_key (none for a composite key: ActiveRecord 6.1 has no
    # composite keys) and no single-table inheritance; has_many on the referenced table and
    # belongs_to on the referencing one for every reference between two defined tables. The
    # columns are introspected when a model is defined (untimed, before any clock): the schema
    # is then in the class, and no operation asks the server for it.
    class ArModels
      def initialize
        @base = Class.new(ActiveRecord::Base) { self.abstract_class = true }
        @models = {}
        @assocs = {} # [from table, from column, to table, to column] → the association's name
      end

      def of(table) = @models.fetch(table) { raise Unsupported, "ActiveRecord: no model of table #{table}" }

      # the models of a shape's tables, and the associations their references declare
      def define_all(tables)
        tables.each { |name, info| define(name, info['key']) }
        tables.each do |name, info|
          (info['references'] || {}).each do |column, ref|
            relate(ref['table'], ref['column'], name, column) if @models.key?(ref['table'])
          end
        end
      end

      def define(table, key)
        @models[table] ||= begin
          model = Class.new(@base) do
            self.table_name = table
            self.primary_key = key.length == 1 ? key.first : nil
            self.inheritance_column = :_no_single_table_inheritance
          end
          ArTables.const_set("T#{ArTables.constants.length}_#{table.gsub(/\W/, '_')}", model)
          model.columns_hash # the schema read now, untimed
          model.define_attribute_methods
          model
        end
      end

      # the association from `from` (table, column) to `to` (table, column), or nil
      def association(from, to) = @assocs[[from['table'], from['column'], to['table'], to['column']]]

      # parent.has_many children (child.column references parent.parent_column), and the
      # child's belongs_to; the has_many's name
      def relate(parent, parent_column, child, column)
        key = [parent, parent_column, child, column]
        @assocs[key] ||= begin
          p = of(parent)
          c = of(child)
          many = free_name(p, child)
          p.has_many many, class_name: c.name, foreign_key: column, primary_key: parent_column, inverse_of: false
          one = free_name(c, column.delete_suffix('_id'))
          c.belongs_to one, class_name: p.name, foreign_key: column, primary_key: parent_column, optional: true,
                            inverse_of: false
          @assocs[[child, column, parent, parent_column]] = one
          many
        end
      end

      private

      def free_name(model, name)
        name = name.to_s
        name += '_' while model.column_names.include?(name) || model.reflect_on_association(name) ||
                          model.method_defined?(name)
        name.to_sym
      end
    end
  end
end
