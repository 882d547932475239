package accessbench.worker;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;

/** FNV-1a 64 over each row's canonical encoding, summed mod 2^64 over rows (PROTOCOL.md
 * "Checksum", src/accessbench/protocol/checksum.py). Used only in verification passes. */
final class Checksum {
    long total;
    long rows;
    int width = -1; // columns of the first row seen

    private long h;

    private void b(int x) {
        h = (h ^ (x & 0xff)) * SplitMix64.FNV_PRIME;
    }

    private void u32(int x) {
        for (int k = 0; k < 4; k++)
            b(x >>> (8 * k));
    }

    private void u64(long x) {
        for (int k = 0; k < 8; k++)
            b((int) (x >>> (8 * k)));
    }

    private void bytes(char tag, byte[] data) {
        b(tag);
        u32(data.length);
        for (byte x : data)
            b(x);
    }

    void add(Row row) {
        if (width < 0)
            width = row.n;
        h = SplitMix64.FNV_OFFSET;
        for (int c = 0; c < row.n; c++) {
            switch (row.type[c]) {
                case Row.NULL -> b('N');
                case Row.BOOL -> {
                    b('B');
                    b((int) row.l[c]);
                }
                case Row.INT -> {
                    b('I');
                    u64(row.l[c]);
                }
                case Row.FLOAT -> {
                    b('F');
                    u64(Double.doubleToRawLongBits(row.d[c]));
                }
                case Row.DECIMAL -> { // BigDecimal, or the text of NaN/±Infinity, which have none
                    Object v = row.o[c];
                    String text = v instanceof BigDecimal x ? x.toPlainString() : v.toString();
                    bytes('D', text.getBytes(StandardCharsets.UTF_8));
                }
                case Row.TEXT -> bytes('S', ((String) row.o[c]).getBytes(StandardCharsets.UTF_8));
                case Row.BYTES -> bytes('X', (byte[]) row.o[c]);
                case Row.TIMESTAMP -> {
                    b('T');
                    Object t = row.o[c];
                    u64(t instanceof OffsetDateTime odt ? Times.micros(odt) : Times.micros((LocalDateTime) t));
                }
                case Row.DATE -> {
                    b('d');
                    u32((int) Times.days((LocalDate) row.o[c]));
                }
                case Row.TIME -> {
                    b('t');
                    u64(Times.micros((LocalTime) row.o[c]));
                }
                default -> throw new IllegalStateException("no canonical encoding for value type " + row.type[c]);
            }
        }
        total += h;
        rows++;
    }

    String hex() {
        return String.format("%016x", total);
    }
}
