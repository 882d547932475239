# frozen_string_literal: true

require_relative 'errors'

# The typed values the generators make (protocol/PROTOCOL.md, "Types"), each type with a Ruby
# representation of its own, so that a value's type is what it is and never a guess:
#   int → Integer, bool → true/false, float → Float, text → String (UTF-8),
#   bytes → String (ASCII-8BIT), decimal → Decimal, date → CalendarDate,
#   timestamp → Timestamp; NULL → nil (its type is its column's: Generator#type).
# Drivers turn them into their own parameter values before the clock (Driver#adapt). With them
# the calendar arithmetic (integer only) and the texts every worker writes alike.
module Accessbench
  TYPES = %w[int bool float decimal text date timestamp bytes].freeze
  DAY_US = 86_400_000_000

  # A decimal: its plain text (no exponent, with the scale it was made with).
  Decimal = Struct.new(:text) do
    def to_s = text
  end

  # A date without time zone: days since 1970-01-01.
  CalendarDate = Struct.new(:days) do
    def iso = Calendar.iso_date(days)
  end

  # A timestamp without time zone: microseconds since 1970-01-01 00:00:00.
  Timestamp = Struct.new(:us) do
    # 'YYYY-MM-DD HH:MM:SS[.ffffff]' (Python's isoformat(sep)); with full, always six digits
    def iso(sep = ' ', full: false) = Calendar.iso_timestamp(us, sep, full)
  end

  # Proleptic Gregorian calendar arithmetic (Howard Hinnant's days_from_civil/civil_from_days).
  module Calendar
    module_function

    def days_from_civil(y, m, d)
      y -= 1 if m <= 2
      era = y.div(400)
      yoe = y - era * 400
      doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
      doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
      era * 146_097 + doe - 719_468
    end

    def civil_from_days(z)
      z += 719_468
      era = z.div(146_097)
      doe = z - era * 146_097
      yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
      doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
      mp = (5 * doy + 2) / 153
      d = doy - (153 * mp + 2) / 5 + 1
      m = mp < 10 ? mp + 3 : mp - 9
      [era * 400 + yoe + (m <= 2 ? 1 : 0), m, d]
    end

    def days_in_month(y, m)
      return 29 if m == 2 && ((y % 4).zero? && (y % 100).nonzero? || (y % 400).zero?)

      [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
    end

    def iso_date(days)
      format('%04d-%02d-%02d', *civil_from_days(days))
    end

    def iso_timestamp(us, sep, full)
      days, rem = us.divmod(DAY_US)
      secs, frac = rem.divmod(1_000_000)
      text = format('%s%s%02d:%02d:%02d', iso_date(days), sep, secs / 3600, secs / 60 % 60, secs % 60)
      full || frac.nonzero? ? format('%s.%06d', text, frac) : text
    end

    DATE = /\A(\d{4})-(\d{2})-(\d{2})\z/
    # datetime.fromisoformat (3.11) for naive values in the forms the suites write:
    # YYYY-MM-DD, then 'T' or ' ' and HH:MM[:SS[.f…]]
    TIMESTAMP = /\A(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\z/

    # 'YYYY-MM-DD' → days since 1970, or nil
    def parse_date(text)
      m = DATE.match(text.to_s) or return nil
      civil_days(m[1].to_i, m[2].to_i, m[3].to_i)
    end

    # an ISO 8601 timestamp without time zone → µs since 1970, or nil
    def parse_timestamp(text)
      m = TIMESTAMP.match(text.to_s) or return nil
      days = civil_days(m[1].to_i, m[2].to_i, m[3].to_i) or return nil
      h = m[4].to_i
      mi = m[5].to_i
      s = m[6].to_i
      return nil if h > 23 || mi > 59 || s > 59

      frac = m[7] ? m[7][0, 6].ljust(6, '0').to_i : 0
      days * DAY_US + ((h * 60 + mi) * 60 + s) * 1_000_000 + frac
    end

    def civil_days(y, m, d)
      return nil if y < 1 || m < 1 || m > 12 || d < 1 || d > days_in_month(y, m)

      days_from_civil(y, m, d)
    end
  end

  # Texts every worker writes alike.
  module Texts
    module_function

    # A double's shortest round-trip text as Python's repr writes it (Ruby's Float#to_s has the
    # same digits but writes 1.0e+300 for 1e+300 and switches to exponent form one power of ten
    # earlier): fixed notation for a decimal exponent in [-4, 16), else d[.ddd]e±XX.
    def float_repr(x)
      return x.to_s if x.nan? || x.infinite?

      sign = x.negative? || (x.zero? && (1.0 / x).negative?) ? '-' : ''
      digits, point = shortest_digits(x.abs)
      return sign + fixed(digits, point) if point > -4 && point <= 16

      mantissa = digits.length > 1 ? "#{digits[0]}.#{digits[1..]}" : digits
      exp = point - 1
      format('%s%se%s%02d', sign, mantissa, exp.negative? ? '-' : '+', exp.abs)
    end

    # the shortest digits of a non-negative double (no trailing zeros) and the decimal point's
    # position: 0.015 → ["15", -1], 1500.0 → ["15", 4]
    def shortest_digits(x)
      return ['0', 1] if x.zero?

      text = x.to_s
      mantissa, exp = text.split('e')
      whole, frac = mantissa.split('.')
      digits = (whole + frac).sub(/\A0+/, '')
      point = whole == '0' ? -(frac.length - frac.sub(/\A0+/, '').length) : whole.length
      digits = digits.sub(/0+\z/, '')
      [digits.empty? ? '0' : digits, point + exp.to_i]
    end

    def fixed(digits, point)
      if point <= 0 then "0.#{'0' * -point}#{digits}"
      elsif point >= digits.length then "#{digits}#{'0' * (point - digits.length)}.0"
      else "#{digits[0, point]}.#{digits[point..]}"
      end
    end

    # The same text always in exponent form (literals: MariaDB reads 0.1 as DECIMAL, 0.1e0 as
    # DOUBLE): Python's repr with e0 appended when it has no exponent.
    def float_exp(x)
      raise ProtocolError, "cannot write #{x} as an SQL literal" unless x.finite?

      text = float_repr(x)
      text.include?('e') ? text : "#{text}e0"
    end

    # A double's IEEE-754 bits as 16 hex digits, big-endian (the `generate` answer).
    def float_bits(x) = [x].pack('G').unpack1('H*')

    def bits_float(hex) = [hex].pack('H*').unpack1('G')

    # An integer count of 10^-scale as plain decimal text: (-1234, 2) → "-12.34"
    def decimal_text(units, scale)
      digits = units.abs.to_s.rjust(scale + 1, '0')
      body = scale.positive? ? "#{digits[0...-scale]}.#{digits[-scale..]}" : digits
      units.negative? ? "-#{body}" : body
    end

    PLAIN = /\A([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?\z/
    # format(Decimal(text), "f"): a decimal's text in plain form (no exponent), or nil
    def decimal_plain(text)
      body = text.to_s.strip
      neg = body.start_with?('-')
      body = body[1..] if neg || body.start_with?('+')
      m = PLAIN.match(body)
      return nil if m.nil? || (m[1].empty? && m[2].to_s.empty?)

      frac = m[2].to_s
      coef = (m[1] + frac).sub(/\A0+/, '')
      exp = m[3].to_i - frac.length
      if coef.empty?
        coef = '0'
        exp = 0 if exp.positive?
      end
      (neg ? '-' : '') + place_point(coef, exp)
    end

    def place_point(coef, exp)
      return coef + '0' * exp if exp >= 0

      k = coef.length + exp
      k.positive? ? "#{coef[0, k]}.#{coef[k..]}" : "0.#{'0' * -k}#{coef}"
    end
  end
end
