package accessbench.worker;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** SQL text in the suites' neutral form ('?' markers), as src/accessbench/protocol/sqltext.py:
 * the scanner skips quoted strings, quoted identifiers and comments; literals for the
 * literal mode. */
final class SqlText {
    private SqlText() {
    }

    /** sql split at its markers: n markers give n + 1 segments. */
    static List<String> segments(String sql) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        int i = 0, n = sql.length();
        while (i < n) {
            char ch = sql.charAt(i);
            if (ch == '\'' || ch == '"') {
                int end = i + 1;
                while (end < n) {
                    if (sql.charAt(end) == ch) {
                        if (end + 1 < n && sql.charAt(end + 1) == ch) { // doubled quote inside
                            end += 2;
                            continue;
                        }
                        break;
                    }
                    end++;
                }
                cur.append(sql, i, Math.min(end + 1, n));
                i = end + 1;
            } else if (sql.startsWith("--", i)) {
                int end = sql.indexOf('\n', i);
                end = end < 0 ? n : end;
                cur.append(sql, i, end);
                i = end;
            } else if (sql.startsWith("/*", i)) {
                int end = sql.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                cur.append(sql, i, end);
                i = end;
            } else if (ch == '?') {
                out.add(cur.toString());
                cur.setLength(0);
                i++;
            } else {
                cur.append(ch);
                i++;
            }
        }
        out.add(cur.toString());
        return out;
    }

    static int countMarkers(String sql) {
        return segments(sql).size() - 1;
    }

    /** The statement with every marker replaced by its value as a literal. dialect: the
     * endpoint's dbms (postgresql, sqlite, mariadb). */
    static String inline(List<String> segments, Object[] values, String dialect) {
        StringBuilder sb = new StringBuilder(segments.get(0));
        for (int k = 0; k < values.length; k++) {
            literal(sb, values[k], dialect);
            sb.append(segments.get(k + 1));
        }
        return sb.toString();
    }

    /** Values as literals separated by ", " (a record-level key: HANDLER … READ index = (…)). */
    static String literals(Object[] values, String dialect) {
        StringBuilder sb = new StringBuilder();
        for (int k = 0; k < values.length; k++) {
            if (k > 0)
                sb.append(", ");
            literal(sb, values[k], dialect);
        }
        return sb.toString();
    }

    /** A value (of a ValueType's class) as an SQL literal (PROTOCOL.md "Literal rules"):
     * booleans TRUE/FALSE (SQLite, which has none: 1/0); decimals as plain digits; floats as
     * their shortest round-trip digits always in exponent form (0.1e0: MariaDB reads 0.1 as
     * DECIMAL), cast ::float8 on PostgreSQL (which reads any such text as numeric); dates
     * 'YYYY-MM-DD' (PostgreSQL: DATE '…'); bytes as '\x…'::bytea on PostgreSQL, X'…'
     * elsewhere; on MariaDB, where a backslash in a string is an escape character, each
     * backslash doubled too. */
    static void literal(StringBuilder sb, Object v, String dialect) {
        boolean postgres = "postgresql".equals(dialect);
        if (v == null) {
            sb.append("NULL");
        } else if (v instanceof Boolean b) {
            if ("sqlite".equals(dialect))
                sb.append(b ? "1" : "0");
            else
                sb.append(b ? "TRUE" : "FALSE");
        } else if (v instanceof Long || v instanceof Integer || v instanceof BigInteger) {
            sb.append(v);
        } else if (v instanceof BigDecimal x) {
            sb.append(x.toPlainString());
        } else if (v instanceof Double x) {
            String digits = pyRepr(x);
            sb.append(digits);
            if (digits.indexOf('e') < 0)
                sb.append("e0");
            if (postgres)
                sb.append("::float8");
        } else if (v instanceof GenTimestamp t) {
            sb.append('\'').append(Times.format(t.micros(), false)).append('\'');
        } else if (v instanceof LocalDateTime t) {
            sb.append('\'').append(Times.format(Times.micros(t), false)).append('\'');
        } else if (v instanceof LocalDate d) {
            sb.append(postgres ? "DATE '" : "'").append(Times.formatDate(d)).append('\'');
        } else if (v instanceof byte[] b) {
            String hex = HexFormat.of().formatHex(b);
            if (postgres)
                sb.append("'\\x").append(hex).append("'::bytea");
            else
                sb.append("X'").append(hex).append('\'');
        } else {
            String s = v.toString();
            if ("mariadb".equals(dialect))
                s = s.replace("\\", "\\\\");
            sb.append('\'').append(s.replace("'", "''")).append('\'');
        }
    }

    /** Python's repr(float): the shortest text that reads back as the same double (the closest
     * such text when several have that length), in Python's layout ('1e+16', '1e-05', '0.1',
     * '100.0'). Java 17's Double.toString is not always shortest (JDK-4511638), so the digits
     * are found here. */
    static String pyRepr(double x) {
        if (Double.isNaN(x))
            return "nan";
        if (Double.isInfinite(x))
            return x > 0 ? "inf" : "-inf";
        if (x == 0)
            return (Double.doubleToRawLongBits(x) < 0) ? "-0.0" : "0.0";
        BigDecimal exact = new BigDecimal(x);
        BigDecimal best = null;
        for (int p = 1; p <= 17 && best == null; p++) {
            BigDecimal c = exact.round(new MathContext(p, RoundingMode.HALF_EVEN));
            BigDecimal ulp = c.ulp();
            for (BigDecimal cand : new BigDecimal[] {c, c.subtract(ulp), c.add(ulp)}) {
                if (cand.signum() == 0 || cand.precision() > p || Double.parseDouble(cand.toString()) != x)
                    continue;
                if (best == null || cand.subtract(exact).abs().compareTo(best.subtract(exact).abs()) < 0)
                    best = cand;
            }
        }
        BigDecimal s = best.stripTrailingZeros();
        String digits = s.unscaledValue().abs().toString();
        int exp10 = digits.length() - 1 - s.scale(); // the decimal exponent of the first digit
        StringBuilder sb = new StringBuilder();
        if (s.signum() < 0)
            sb.append('-');
        if (exp10 < -4 || exp10 >= 16) {
            sb.append(digits.charAt(0));
            if (digits.length() > 1)
                sb.append('.').append(digits, 1, digits.length());
            sb.append('e').append(exp10 < 0 ? '-' : '+');
            int e = Math.abs(exp10);
            if (e < 10)
                sb.append('0');
            sb.append(e);
        } else if (exp10 < 0) {
            sb.append("0.");
            for (int k = -1; k > exp10; k--)
                sb.append('0');
            sb.append(digits);
        } else if (digits.length() <= exp10 + 1) {
            sb.append(digits);
            for (int k = digits.length(); k <= exp10; k++)
                sb.append('0');
            sb.append(".0");
        } else {
            sb.append(digits, 0, exp10 + 1).append('.').append(digits, exp10 + 1, digits.length());
        }
        return sb.toString();
    }
}
