# frozen_string_literal: true

require_relative 'errors'
require_relative 'values'

# SQL text in the suites' neutral form (`?` markers; src/accessbench/protocol/sqltext.py): the
# marker scanner, which skips quoted strings, quoted identifiers and comments, the rewriting of
# markers for a driver, and the literal rules of the `literal` mode.
module Accessbench
  module SqlText
    module_function

    # sql split at its markers: n markers give n + 1 segments
    def segments(sql)
      out = []
      current = +''
      i = 0
      n = sql.length
      while i < n
        ch = sql[i]
        if ch == "'" || ch == '"'
          stop = quoted_end(sql, i, ch)
          current << sql[i..stop]
          i = stop + 1
        elsif (two = sql[i, 2]) == '--' || two == '/*'
          stop = comment_end(sql, i)
          current << sql[i...stop]
          i = stop
        elsif ch == '?'
          out << current
          current = +''
          i += 1
        else
          current << ch
          i += 1
        end
      end
      out << current
    end

    # the index of the quote closing the string or identifier opened at i (doubled quotes inside)
    def quoted_end(sql, i, quote)
      stop = i + 1
      while stop < sql.length
        if sql[stop] != quote then stop += 1
        elsif sql[stop + 1] == quote then stop += 2
        else return stop
        end
      end
      stop
    end

    # the index just past the comment starting at i
    def comment_end(sql, i)
      if sql[i] == '-'
        stop = sql.index("\n", i)
        return stop || sql.length
      end
      stop = sql.index('*/', i + 2)
      stop ? stop + 2 : sql.length
    end

    def count_markers(sql) = segments(sql).length - 1

    # '?' markers → the driver's: :qmark (?) or :numeric ($1, $2, …)
    def convert_markers(sql, style)
      segs = segments(sql)
      out = segs[0].dup
      segs[1..].each_with_index { |seg, k| out << (style == :numeric ? "$#{k + 1}" : '?') << seg }
      out
    end

    # How a DBMS reads the literal mode's values, where it departs from standard SQL.
    Rules = Struct.new(:booleans, :float_cast, :date_keyword, :bytes_around, :backslash_escapes)
    STANDARD = Rules.new(%w[TRUE FALSE], '', false, ["X'", "'"], false)
    DIALECTS = {
      'postgresql' => Rules.new(%w[TRUE FALSE], '::float8', true, ["'\\x", "'::bytea"], false),
      'sqlite' => Rules.new(%w[1 0], '', false, ["X'", "'"], false), # no boolean type: bound as 1/0, so written so
      'mariadb' => Rules.new(%w[TRUE FALSE], '', false, ["X'", "'"], true), # backslash escapes (default sql_mode)
      'duckdb' => Rules.new(%w[TRUE FALSE], '', true, ["X'", "'"], false)
    }.freeze

    # A value as an SQL literal of `dbms` (protocol/PROTOCOL.md, "Literal rules"), by its type.
    def literal(value, dbms)
      r = DIALECTS.fetch(dbms, STANDARD)
      case value
      when nil then 'NULL'
      when true then r.booleans[0]
      when false then r.booleans[1]
      when Integer then value.to_s
      when Float then Texts.float_exp(value) + r.float_cast # exponent form: a double on MariaDB
      when Decimal then value.text
      when Timestamp then "'#{value.iso}'"
      when CalendarDate then "#{r.date_keyword ? 'DATE ' : ''}'#{value.iso}'"
      when String then string_literal(value, r)
      else raise ProtocolError, "cannot inline a #{value.class} as an SQL literal"
      end
    end

    def string_literal(value, rules)
      if value.encoding == Encoding::BINARY
        "#{rules.bytes_around[0]}#{value.unpack1('H*')}#{rules.bytes_around[1]}"
      else
        text = rules.backslash_escapes ? value.gsub('\\', '\\\\\\\\') : value
        "'#{text.gsub("'", "''")}'"
      end
    end

    # The statement (as its segments) with each marker replaced by its value as a literal.
    def inline(segs, values, dbms)
      out = segs[0].dup
      values.each_with_index { |v, k| out << literal(v, dbms) << segs[k + 1] }
      out
    end
  end
end
