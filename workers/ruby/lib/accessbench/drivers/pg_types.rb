# frozen_string_literal: true

require 'bigdecimal'
require 'date'
require 'pg'
require_relative '../checksum'
require_relative '../driver'
require_relative '../values'

module Accessbench
  module Drivers
    # ruby-pg's coders as rb-pg uses them (and a layer over ruby-pg may): the encoders that bind
    # each protocol type with its OID, and the type map that decodes results — ruby-pg's
    # PG::BasicTypeMapForResults over a registry of its default coders with the three decoders
    # that are not exact replaced.
    module PgTypes
      # A double as Ruby's shortest round-trip text (Float#to_s; float8in reads 1.0e+300 and
      # -0.0): PG::TextEncoder::Float of ruby-pg 1.4.5 writes 2.5e-300 as 0e-301 and
      # 1.2345678901234568e+16 with sixteen digits, so it cannot bind every double.
      class FloatText < PG::SimpleEncoder
        def encode(value) = value.to_s
      end

      # time (without time zone) → µs since midnight (ruby-pg has no decoder for it)
      class TimeOfDay < PG::SimpleDecoder
        def decode(text, _tuple = nil, _field = nil)
          h, m, s = text.split(':', 3)
          whole, frac = s.split('.', 2)
          ((h.to_i * 60 + m.to_i) * 60 + whole.to_i) * 1_000_000 + frac.to_s[0, 6].ljust(6, '0').to_i
        end
      end

      # ruby-pg's default text decoders, but: numeric as PostgreSQL's text (a BigDecimal keeps
      # no scale: 12.50 would read back as 12.5), timestamp as a UTC Time (the default
      # TimestampLocal reads the wall clock in the process's zone; as UTC it is the value's own
      # µs since 1970), time as µs since midnight
      REGISTRY = PG::BasicTypeRegistry.new.register_default_types
                                      .register_type(0, 'numeric', PG::TextEncoder::Numeric, PG::TextDecoder::String)
                                      .register_type(0, 'timestamp', PG::TextEncoder::TimestampWithoutTimeZone,
                                                     PG::TextDecoder::TimestampUtc)
                                      .register_type(0, 'time', nil, TimeOfDay)

      # The results' type map, from the server's pg_type (one catalog query, untimed at open);
      # a type it has no decoder for is read as its text (not ruby-pg's warning map).
      def self.results_map(conn)
        map = PG::BasicTypeMapForResults.new(conn, registry: REGISTRY)
        map.default_type_map = PG::TypeMapAllStrings.new
        map
      end

      OID = { bool: 16, bytea: 17, int8: 20, int2: 21, int4: 23, oid: 26, float4: 700, float8: 701, date: 1082,
              time: 1083, timestamp: 1114, timestamptz: 1184, numeric: 1700 }.freeze

      # a result column's type OID → the checksum's kind of its decoded value
      KIND = Hash.new(:text).merge(
        OID[:bool] => :bool, OID[:bytea] => :bytes, OID[:int8] => :int, OID[:int2] => :int, OID[:int4] => :int,
        OID[:oid] => :int, OID[:float4] => :float, OID[:float8] => :float, OID[:numeric] => :decimal,
        OID[:date] => :date, OID[:time] => :time, OID[:timestamp] => :timestamp, OID[:timestamptz] => :timestamp
      ).freeze

      # Each protocol type bound as its PostgreSQL type (the OID sent in Parse): the encoder,
      # and the value the encoder is given (made before the clock; nil: as generated).
      PARAMS = {
        'int' => [PG::TextEncoder::Integer.new(oid: OID[:int8]), nil],
        'bool' => [PG::TextEncoder::Boolean.new(oid: OID[:bool]), nil],
        'float' => [FloatText.new(oid: OID[:float8]), nil],
        'decimal' => [PG::TextEncoder::Numeric.new(oid: OID[:numeric]), ->(v) { BigDecimal(v.text) }],
        'text' => [PG::TextEncoder::String.new(oid: 25), nil],
        'date' => [PG::TextEncoder::Date.new(oid: OID[:date]), ->(v) { Date.jd(v.days + Checksum::EPOCH_JD) }],
        'timestamp' => [PG::TextEncoder::TimestampWithoutTimeZone.new(oid: OID[:timestamp]),
                        ->(v) { Time.at(*v.us.divmod(1_000_000), :usec, in: 'UTC') }],
        'bytes' => [PG::BinaryEncoder::Bytea.new(oid: OID[:bytea]), nil] # sent in binary format: the bytes as they are
      }.freeze
      # COPY's text format writes bytea as its text
      COPY_BYTES = PG::TextEncoder::Bytea.new(oid: OID[:bytea])

      # a Ruby value's protocol type, for values bound by class (a load's keys as read)
      def self.type_of(value)
        case value
        when Integer then 'int'
        when Float then 'float'
        when true, false then 'bool'
        when BigDecimal then 'decimal'
        when Date then 'date'
        when Time then 'timestamp'
        when String then value.encoding == Encoding::BINARY ? 'bytes' : 'text'
        end
      end

      module_function

      # the encoders of values by their class (a NULL: none, its type left to the server)
      def map_for(values) = PG::TypeMapByColumn.new(values.map { |v| (t = type_of(v)) && PARAMS.fetch(t).first })

      # the encoders of a statement's parameters, by type
      def params_map(types) = PG::TypeMapByColumn.new(types.map { |t| PARAMS.fetch(t).first })

      def copy_map(types)
        PG::TypeMapByColumn.new(types.map { |t| t == 'bytes' ? COPY_BYTES : PARAMS.fetch(t).first })
      end

      # generated rows → the values the encoders take
      def values(rows, types) = Driver.convert_rows(rows, types, PARAMS.transform_values(&:last))
    end
  end
end
