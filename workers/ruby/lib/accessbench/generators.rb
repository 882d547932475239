# frozen_string_literal: true

require_relative 'errors'
require_relative 'prng'
require_relative 'values'

# Value generators (protocol/PROTOCOL.md, "Generators"; src/accessbench/protocol/generators.py):
# each spec owns one splitmix64 stream; value i is the i-th value drawn, in order, of the
# spec's type (values.rb), NULL as nil.
module Accessbench
  # One spec's stream of values.
  class Generator
    # the type a kind's values always have (choice and const: their spec's `type`)
    KIND_TYPES = { 'seq' => 'int', 'uniform' => 'int', 'text' => 'text', 'timestamp' => 'timestamp',
                   'float' => 'float', 'decimal' => 'decimal', 'date' => 'date', 'bytes' => 'bytes' }.freeze

    attr_reader :type

    def initialize(spec)
      raise ProtocolError, 'a generator spec must be an object' unless spec.is_a?(Hash)

      @spec = spec
      @rng = SplitMix64.new(int_field('seed', 0))
      @null = spec['null'] ? Float(spec['null']) : 0.0
      @type = Generator.type_of(spec)
      kind = spec['kind']
      maker = "make_#{kind}"
      raise ProtocolError, "unknown generator kind #{kind.inspect}" unless KIND_TYPES.key?(kind) ||
                                                                           %w[choice const].include?(kind)

      @make = send(maker)
      @i = 0
    end

    # The type of a spec's values: its kind's, or for choice and const the spec's `type` (which
    # the runner always sends; without one, that of the first value as JSON has it).
    def self.type_of(spec)
      declared = spec['type']
      raise ProtocolError, "unknown value type #{declared.inspect}" if declared && !TYPES.include?(declared)

      own = KIND_TYPES[spec['kind']]
      if own
        raise ProtocolError, "a #{spec['kind']} generator makes #{own}, not #{declared}" if declared && declared != own

        return own
      end
      declared || json_type(spec['kind'] == 'choice' ? Array(spec['values']).first : spec['value'])
    end

    def self.json_type(value)
      case value
      when true, false then 'bool'
      when Integer then 'int'
      when Float then 'float'
      else 'text'
      end
    end

    def next_value
      i = @i
      @i += 1
      # the null draw comes first; a NULL value makes no value draws
      return nil if @null.positive? && @rng.unit < @null

      @make.call(i)
    end

    def take(count) = Array.new(count) { next_value }

    private

    def int_field(key, default = nil)
      v = @spec[key]
      return default if v.nil? && !default.nil?
      raise ProtocolError, "generator field '#{key}' must be an integer" unless v.is_a?(Integer)

      v
    end

    def number_field(key)
      v = @spec[key]
      raise ProtocolError, "generator field '#{key}' must be a number" unless v.is_a?(Numeric)

      v.to_f
    end

    def make_seq
      start = int_field('start', 1)
      step = int_field('step', 1)
      div = int_field('div', 1)
      mod = @spec['mod'] ? int_field('mod') : 0
      raise ProtocolError, 'seq: div must not be 0' if div.zero?

      # Ruby's div and % floor, as Python's // and % do
      mod.zero? ? ->(i) { (start + i * step).div(div) } : ->(i) { (start + i * step).div(div) % mod }
    end

    def make_uniform
      lo = int_field('lo')
      span = int_field('hi') - lo + 1
      raise ProtocolError, 'uniform: hi must be >= lo' unless span.positive?

      ->(_) { lo + @rng.next_u64 % span }
    end

    def make_choice
      values = @spec['values']
      raise ProtocolError, 'choice: values must be a non-empty list' unless values.is_a?(Array) && !values.empty?

      typed = values.map { |v| Generator.typed(v, @type) }
      ->(_) { typed[@rng.next_u64 % typed.length] }
    end

    def make_const
      raise ProtocolError, 'const: value is missing' unless @spec.key?('value')

      value = Generator.typed(@spec['value'], @type)
      ->(_) { value }
    end

    def make_text
      pattern = @spec['pattern']
      raise ProtocolError, 'text: pattern must be a string' unless pattern.is_a?(String)

      chars = pattern.chars
      lambda do |_|
        out = +''
        chars.each do |ch|
          out << case ch
                 when '#' then (48 + @rng.next_u64 % 10).chr
                 when '?' then (97 + @rng.next_u64 % 26).chr
                 else ch
                 end
        end
        out
      end
    end

    def make_timestamp
      start = Calendar.parse_timestamp(@spec['start']) or
        raise ProtocolError, 'timestamp: start must be an ISO timestamp without time zone, like 2001-01-01T00:00:00'
      step = int_field('step_us', 1_000_000)
      jitter = int_field('jitter_us', 0)
      raise ProtocolError, 'timestamp: jitter_us must be >= 0' if jitter.negative?
      return ->(i) { Timestamp.new(start + i * step) } if jitter.zero?

      ->(i) { Timestamp.new(start + i * step + @rng.next_u64 % (jitter + 1)) }
    end

    # all in binary64: v = lo + unit()·(hi − lo); with digits d, floor(v·P + 0.5) / P where
    # P = 10^d is made by multiplying 1.0 by 10.0 d times (exact up to 10^22)
    def make_float
      lo = number_field('lo')
      width = number_field('hi') - lo
      return ->(_) { lo + @rng.unit * width } if @spec['digits'].nil?

      digits = int_field('digits')
      raise ProtocolError, 'float: digits must be 0…15' unless (0..15).cover?(digits)

      p = 1.0
      digits.times { p *= 10.0 }
      ->(_) { ((lo + @rng.unit * width) * p + 0.5).floor.to_f / p }
    end

    # lo and hi count units of 10^-scale
    def make_decimal
      lo = int_field('lo')
      span = int_field('hi') - lo + 1
      scale = int_field('scale', 0)
      raise ProtocolError, 'decimal: hi must be >= lo' unless span.positive?
      raise ProtocolError, 'decimal: scale must be >= 0' if scale.negative?

      ->(_) { Decimal.new(Texts.decimal_text(lo + @rng.next_u64 % span, scale)) }
    end

    def make_date
      start = Calendar.parse_date(@spec['start']) or raise ProtocolError, 'date: start must be a date YYYY-MM-DD'
      step = int_field('step_days', 1)
      jitter = int_field('jitter_days', 0)
      raise ProtocolError, 'date: jitter_days must be >= 0' if jitter.negative?
      return ->(i) { CalendarDate.new(start + i * step) } if jitter.zero?

      ->(i) { CalendarDate.new(start + i * step + @rng.next_u64 % (jitter + 1)) }
    end

    def make_bytes
      length = int_field('length', -1)
      raise ProtocolError, 'bytes: length must be >= 0' if length.negative?

      ->(_) { Array.new(length) { @rng.next_u64 & 0xff }.pack('C*') }
    end

    class << self
      # A choice's or const's JSON value as a value of `type`: booleans, integers, numbers (a
      # float may be written as an integer), strings; decimals, dates, timestamps and bytes as
      # their text forms (plain digits, YYYY-MM-DD, ISO 8601, hex).
      def typed(value, type)
        out = TYPED.fetch(type).call(value)
        raise ProtocolError, "#{value.inspect} is not a #{type} value" if out.nil?

        out
      end

      TYPED = {
        'bool' => ->(v) { v if [true, false].include?(v) },
        'int' => ->(v) { v if v.is_a?(Integer) },
        'float' => ->(v) { v.to_f if v.is_a?(Numeric) },
        'text' => ->(v) { v.dup.force_encoding(Encoding::UTF_8) if v.is_a?(String) },
        'decimal' => ->(v) { (t = Texts.decimal_plain(v.to_s)) && Decimal.new(t) if v.is_a?(String) || v.is_a?(Numeric) },
        'date' => ->(v) { (d = Calendar.parse_date(v)) && CalendarDate.new(d) },
        'timestamp' => ->(v) { (us = Calendar.parse_timestamp(v)) && Timestamp.new(us) },
        'bytes' => ->(v) { [v].pack('H*') if v.is_a?(String) && v.match?(/\A(\h\h)*\z/) }
      }.freeze
      private_constant :TYPED
    end
  end

  module Generators
    module_function

    # `count` rows, one value from each spec per row, and the columns' types
    def rows(specs, count)
      gens = specs.map { |s| Generator.new(s) }
      rows = Array.new(count) { gens.map(&:next_value) }
      [rows, gens.map(&:type)]
    end

    # A generated value as the `generate` op answers it: floats as their bits in hex, decimals
    # as their text, dates YYYY-MM-DD, timestamps with six fraction digits, bytes in hex.
    def to_json_value(value)
      case value
      when Float then Texts.float_bits(value)
      when Timestamp then value.iso('T', full: true)
      when CalendarDate then value.iso
      when Decimal then value.text
      when String then value.encoding == Encoding::BINARY ? value.unpack1('H*') : value
      else value
      end
    end
  end
end
