# frozen_string_literal: true

require 'date'
require_relative 'errors'
require_relative 'prng'
require_relative 'values'

# The verification checksum (protocol/PROTOCOL.md, "Checksum"): per row FNV-1a 64 over the
# concatenation of each value's canonical encoding; the sum of the row hashes mod 2^64.
#
# A value's encoding is chosen by its column's kind when the driver knows it (PostgreSQL: from
# the result's type OIDs, so that numeric's text is a decimal and not a string) and otherwise
# by the value's Ruby class (mysql2, sqlite3): Integer, Float, true/false, String (ASCII-8BIT:
# bytes, else text), Time (a timestamp: aware values are instants, so µs since the epoch in
# UTC), Date, Decimal. A BigDecimal keeps no scale (12.50 reads back as 12.5), so it has no
# canonical encoding: checksumming one is answered `unsupported`.
module Accessbench
  class Checksum
    EPOCH_JD = 2_440_588 # Date.new(1970, 1, 1).jd
    KINDS = %i[bool int float decimal text bytes timestamp date time].freeze

    attr_reader :rows, :dumped

    # dump > 0: also keep the first `dump` rows read, as typed values (`dumped`)
    def initialize(dump = 0)
      @total = 0
      @rows = 0
      @dump = dump
      @dumped = []
    end

    # one row: its values, and each column's kind (nil, or a nil entry: by the value's class)
    def add_row(row, kinds = nil)
      buf = String.new(encoding: Encoding::BINARY)
      typed = @rows < @dump ? [] : nil
      row.each_with_index do |value, c|
        kind = value.nil? ? nil : (kinds && kinds[c]) || Checksum.kind_of(value)
        Checksum.encode(buf, value, kind)
        typed << Checksum.typed_json(value, kind) if typed
      end
      @dumped << typed if typed
      @total = (@total + Fnv1a.new.bytes(buf).value) & MASK64
      @rows += 1
    end

    def add_rows(rows, kinds = nil) = rows.each { |r| add_row(r, kinds) }

    def hex = format('%016x', @total)

    class << self
      def kind_of(value)
        case value
        when Integer then :int
        when Float then :float
        when true, false then :bool
        when String then value.encoding == Encoding::BINARY ? :bytes : :text
        when Time, DateTime then :timestamp
        when Date, CalendarDate then :date
        when Decimal then :decimal
        when Timestamp then :timestamp
        else unencodable(value)
        end
      end

      def unencodable(value)
        if defined?(BigDecimal) && value.is_a?(BigDecimal)
          raise Unsupported, 'a decimal read as BigDecimal keeps no scale (12.50 reads back as 12.5), so its ' \
                             "column's text, which the checksum encodes, is lost"
        end
        raise TypeError, "no canonical encoding for #{value.class}"
      end

      # µs since 1970 of a timestamp value: a Time (its instant), or the µs themselves
      def micros(value)
        case value
        when Integer then value
        when Timestamp then value.us
        when DateTime then micros(value.to_time)
        else value.to_i * 1_000_000 + value.usec
        end
      end

      def days(value) = value.is_a?(Integer) ? value : value.is_a?(CalendarDate) ? value.days : value.jd - EPOCH_JD

      def text_of(value) = value.is_a?(String) ? value : value.to_s

      def encode(buf, v, kind)
        case kind
        when nil then buf << 'N'
        when :bool then buf << (v ? "B\x01" : "B\x00")
        when :int, :time then buf << (kind == :int ? 'I' : 't') << [v & MASK64].pack('Q<')
        when :timestamp then buf << 'T' << [micros(v) & MASK64].pack('Q<')
        when :float then buf << 'F' << [v].pack('E')
        when :date then buf << 'd' << [days(v) & 0xffffffff].pack('V')
        else
          data = text_of(v).b
          buf << { decimal: 'D', text: 'S', bytes: 'X' }.fetch(kind) << [data.bytesize].pack('V') << data
        end
      end

      # A value read as the protocol writes it out ({"type", "value"}: the `checksum` op's input,
      # a verification's `dump`): what `encode` encodes, readable.
      def typed_json(v, kind)
        case kind
        when nil then { 'type' => 'null' }
        when :bool then { 'type' => 'bool', 'value' => v ? true : false }
        when :int, :time then { 'type' => kind.to_s, 'value' => signed64(v) }
        when :timestamp then { 'type' => 'timestamp', 'value' => signed64(micros(v)) }
        when :date then { 'type' => 'date', 'value' => days(v) }
        when :float then { 'type' => 'float', 'value' => Texts.float_bits(v) }
        when :bytes then { 'type' => 'bytes', 'value' => text_of(v).unpack1('H*') }
        else { 'type' => kind.to_s, 'value' => text_of(v) }
        end
      end

      def signed64(v)
        v &= MASK64
        v >= (1 << 63) ? v - (1 << 64) : v
      end

      # A typed conformance value ({"type", "value"}) → [native value, kind]
      def typed_value(t)
        raise ProtocolError, 'a typed value is an object' unless t.is_a?(Hash)

        v = t['value']
        case t['type']
        when 'null' then [nil, nil]
        when 'bool' then [v == true, :bool]
        when 'int', 'timestamp', 'time', 'date' then [integer(v, t['type']), t['type'].to_sym]
        when 'float' then [Texts.bits_float(hex(v, 16)), :float]
        when 'decimal' then [Texts.decimal_plain(v.to_s) || raise(ProtocolError, "not a decimal: #{v}"), :decimal]
        when 'text' then [string(v), :text]
        when 'bytes' then [[hex(v)].pack('H*'), :bytes]
        else raise ProtocolError, "unknown value type #{t['type'].inspect}"
        end
      end

      def integer(v, type)
        raise ProtocolError, "a #{type} value must be an integer" unless v.is_a?(Integer)

        v
      end

      def string(v)
        raise ProtocolError, 'a text value is a string' unless v.is_a?(String)

        v
      end

      def hex(v, length = nil)
        ok = v.is_a?(String) && v.match?(/\A(\h\h)*\z/) && (length.nil? || v.length == length)
        raise ProtocolError, "not hex: #{v.inspect}" unless ok

        v
      end
    end
  end
end
