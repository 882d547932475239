# frozen_string_literal: true

# splitmix64 and FNV-1a 64, as src/accessbench/protocol/prng.py has them. Ruby's integers are
# arbitrary precision: every step of the 64-bit arithmetic is masked back to 64 bits.
module Accessbench
  MASK64 = (1 << 64) - 1

  # One generator's stream: `next_u64` the next 64-bit value, `unit` a double in [0, 1) from
  # its top 53 bits (exact in every IEEE-754 language).
  class SplitMix64
    GOLDEN = 0x9E3779B97F4A7C15
    M1 = 0xBF58476D1CE4E5B9
    M2 = 0x94D049BB133111EB
    UNIT = 1.0 / (1 << 53)

    def initialize(seed)
      @state = seed & MASK64
    end

    def next_u64
      @state = (@state + GOLDEN) & MASK64
      z = @state
      z = ((z ^ (z >> 30)) * M1) & MASK64
      z = ((z ^ (z >> 27)) * M2) & MASK64
      z ^ (z >> 31)
    end

    def unit
      (next_u64 >> 11) * UNIT
    end
  end

  # FNV-1a 64 over bytes, held in two 32-bit halves so that every operation stays a Fixnum
  # (a 64-bit product would make a Bignum per byte). The prime is 2^40 + 0x1b3: h · prime =
  # h · 0x1b3 + (h << 40), and (h << 40) touches the high half only, as lo << 8.
  class Fnv1a
    OFFSET_HI = 0xcbf29ce4
    OFFSET_LO = 0x84222325
    LOW_PRIME = 0x1b3
    MASK32 = 0xffffffff

    def initialize
      @hi = OFFSET_HI
      @lo = OFFSET_LO
    end

    def bytes(data)
      hi = @hi
      lo = @lo
      data.each_byte do |b|
        lo ^= b
        product = lo * LOW_PRIME
        hi = (hi * LOW_PRIME + (product >> 32) + (lo << 8)) & MASK32
        lo = product & MASK32
      end
      @hi = hi
      @lo = lo
      self
    end

    def value
      (@hi << 32) | @lo
    end
  end
end
