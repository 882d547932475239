# frozen_string_literal: true

require_relative 'errors'
require_relative 'prng'

# When each operation of an open-loop (`rate`) step is meant to start, in ns from the trial's
# start (src/accessbench/protocol/schedule.py): the first at 0, then `at += gap` in a double,
# each offset truncated toward zero. Poisson gaps are −ln(1 − u) · 10⁹ / rate with u from
# splitmix64 (pgbench -R); uniform gaps 10⁹ / rate.
module Accessbench
  class Schedule
    ARRIVALS = %w[poisson uniform].freeze

    def initialize(rate, arrival, seed)
      raise ProtocolError, 'rate must be positive' unless rate.is_a?(Numeric) && rate.positive?
      raise ProtocolError, "unknown arrival #{arrival.inspect}" unless ARRIVALS.include?(arrival)

      @mean_gap = 1e9 / rate
      @poisson = arrival == 'poisson'
      @rng = SplitMix64.new(seed)
      @at = 0.0
    end

    def next_offset
      offset = @at
      @at += @poisson ? -Math.log(1.0 - @rng.unit) * @mean_gap : @mean_gap
      offset.to_i
    end
  end
end
