# frozen_string_literal: true

# The latency histogram of a step under load (src/accessbench/protocol/histogram.py):
# log-linear over integer nanoseconds, with integer operations only so every language files a
# value in the same bucket. A value v under 256 is bucket v; otherwise, with L its bit length,
# bucket (L − 8) · 128 + (v >> (L − 8)). Values of 2⁴⁰ ns or more count in `overflow`.
module Accessbench
  class Histogram
    EXACT = 256
    SUB = 128
    LIMIT = 1 << 40
    BUCKETS = (40 - 8 + 1) * SUB + EXACT # more than the highest value below LIMIT needs

    attr_reader :n

    def initialize
      @counts = Array.new(BUCKETS, 0) # preallocated: recording allocates nothing
      @overflow = 0
      @n = 0
      @min = 0
      @max = 0
      @sum = 0
    end

    def self.bucket(v)
      return v if v < EXACT

      shift = v.bit_length - 8
      shift * SUB + (v >> shift)
    end

    def record(v)
      if v >= LIMIT then @overflow += 1
      else @counts[Histogram.bucket(v)] += 1
      end
      @min = v if @n.zero? || v < @min
      @max = v if v > @max
      @sum += v
      @n += 1
    end

    def merge(other)
      other.each_count { |b, c| @counts[b] += c }
      @min = other.min if other.n.positive? && (@n.zero? || other.min < @min)
      @max = other.max if other.max > @max
      @overflow += other.overflow
      @sum += other.sum
      @n += other.n
    end

    def each_count
      @counts.each_with_index { |c, b| yield b, c if c.positive? }
    end

    # the wire form: sparse [bucket, count] pairs in bucket order
    def to_wire
      buckets = []
      each_count { |b, c| buckets << [b, c] }
      { 'buckets' => buckets, 'overflow' => @overflow, 'min' => @min, 'max' => @max, 'sum' => @sum }
    end

    protected

    attr_reader :min, :max, :overflow, :sum
  end
end
