package accessbench.worker;

import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/** Timestamps as the protocol writes them (Python's datetime.isoformat) and reads them
 * (datetime.fromisoformat, naive only). */
final class Times {
    private Times() {
    }

    static final long US_PER_DAY = 86_400_000_000L;

    static LocalDateTime toLocal(long micros) {
        return LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
                (int) Math.floorMod(micros, 1_000_000L) * 1000, ZoneOffset.UTC);
    }

    /** µs since 1970 of a naive timestamp; PostgreSQL's ±infinity (LocalDateTime.MAX/MIN from
     * pgjdbc) become the int64 extremes, as c-libpq gives them. */
    static long micros(LocalDateTime t) {
        if (t.equals(LocalDateTime.MAX))
            return Long.MAX_VALUE;
        if (t.equals(LocalDateTime.MIN))
            return Long.MIN_VALUE;
        return t.toEpochSecond(ZoneOffset.UTC) * 1_000_000L + t.getNano() / 1000;
    }

    static long micros(OffsetDateTime t) {
        if (t.equals(OffsetDateTime.MAX))
            return Long.MAX_VALUE;
        if (t.equals(OffsetDateTime.MIN))
            return Long.MIN_VALUE;
        return t.toEpochSecond() * 1_000_000L + t.getNano() / 1000;
    }

    static long days(LocalDate d) {
        if (d.equals(LocalDate.MAX))
            return Integer.MAX_VALUE;
        if (d.equals(LocalDate.MIN))
            return Integer.MIN_VALUE;
        return d.toEpochDay();
    }

    static long micros(LocalTime t) {
        return t.toNanoOfDay() / 1000;
    }

    private static void pad(StringBuilder sb, long v, int width) {
        String s = Long.toString(v);
        for (int k = s.length(); k < width; k++)
            sb.append('0');
        sb.append(s);
    }

    /** 'YYYY-MM-DD HH:MM:SS[.ffffff]' (sep ' ', fraction only when non-zero: isoformat(sep=" "))
     * or, for the generate op, 'YYYY-MM-DDTHH:MM:SS.ffffff' (always six digits). */
    static String format(long micros, boolean generateForm) {
        LocalDateTime t = toLocal(micros);
        StringBuilder sb = new StringBuilder(26);
        int y = t.getYear();
        if (y < 0) {
            sb.append('-');
            y = -y;
        }
        pad(sb, y, 4);
        sb.append('-');
        pad(sb, t.getMonthValue(), 2);
        sb.append('-');
        pad(sb, t.getDayOfMonth(), 2);
        sb.append(generateForm ? 'T' : ' ');
        pad(sb, t.getHour(), 2);
        sb.append(':');
        pad(sb, t.getMinute(), 2);
        sb.append(':');
        pad(sb, t.getSecond(), 2);
        int us = t.getNano() / 1000;
        if (generateForm || us != 0) {
            sb.append('.');
            pad(sb, us, 6);
        }
        return sb.toString();
    }

    static String formatDate(LocalDate d) {
        StringBuilder sb = new StringBuilder(10);
        pad(sb, d.getYear(), 4);
        sb.append('-');
        pad(sb, d.getMonthValue(), 2);
        sb.append('-');
        pad(sb, d.getDayOfMonth(), 2);
        return sb.toString();
    }

    private static int digits(String s, int at, int n) throws WorkerError {
        if (at + n > s.length())
            throw bad(s);
        int v = 0;
        for (int k = 0; k < n; k++) {
            char c = s.charAt(at + k);
            if (c < '0' || c > '9')
                throw bad(s);
            v = v * 10 + (c - '0');
        }
        return v;
    }

    private static WorkerError bad(String s) {
        return WorkerError.protocol("not an ISO 8601 timestamp without time zone: '" + s + "'");
    }

    /** µs since 1970 of an ISO 8601 text as Python 3.11's datetime.fromisoformat reads it:
     * YYYY-MM-DD or YYYYMMDD, then optionally any one separator and HH[:MM[:SS[.f…]]] (or the
     * compact HHMMSS forms). A time zone is an error (the suite has none). */
    static long parseIso(String s) throws WorkerError {
        int y, mo, d, i;
        if (s.length() >= 10 && s.charAt(4) == '-') {
            y = digits(s, 0, 4);
            if (s.charAt(7) != '-')
                throw bad(s);
            mo = digits(s, 5, 2);
            d = digits(s, 8, 2);
            i = 10;
        } else {
            y = digits(s, 0, 4);
            mo = digits(s, 4, 2);
            d = digits(s, 6, 2);
            i = 8;
        }
        int h = 0, mi = 0, sec = 0, us = 0;
        if (i < s.length()) {
            i++; // the separator, any one character
            h = digits(s, i, 2);
            i += 2;
            boolean extended = i < s.length() && s.charAt(i) == ':';
            if (i < s.length() && (extended || Character.isDigit(s.charAt(i)))) {
                if (extended)
                    i++;
                mi = digits(s, i, 2);
                i += 2;
                if (i < s.length() && (extended ? s.charAt(i) == ':' : Character.isDigit(s.charAt(i)))) {
                    if (extended)
                        i++;
                    sec = digits(s, i, 2);
                    i += 2;
                    if (i < s.length() && (s.charAt(i) == '.' || s.charAt(i) == ',')) {
                        i++;
                        int nd = 0, start = i;
                        while (i < s.length() && Character.isDigit(s.charAt(i))) {
                            if (nd < 6) {
                                us = us * 10 + (s.charAt(i) - '0');
                                nd++;
                            }
                            i++;
                        }
                        if (i == start)
                            throw bad(s);
                        for (; nd < 6; nd++)
                            us *= 10;
                    }
                }
            }
            if (i != s.length())
                throw WorkerError.protocol("timestamp '" + s + "': a time zone or trailing text is not allowed (timestamps are naive)");
        }
        try {
            LocalDateTime t = LocalDateTime.of(y, mo, d, h, mi, sec, us * 1000);
            return micros(t);
        } catch (java.time.DateTimeException e) {
            throw bad(s);
        }
    }
}
