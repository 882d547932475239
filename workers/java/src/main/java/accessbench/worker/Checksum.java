package accessbench.worker;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.util.HexFormat;

/** FNV-1a 64 over each row's canonical encoding, summed mod 2^64 over rows (PROTOCOL.md
 * "Checksum", src/accessbench/protocol/checksum.py). Used only in verification passes.
 *
 * A pass asked for a dump (to explain a mismatch) also writes its first rows as typed values
 * (`{"type": T, "value": V}`, the `checksum` op's input form; checksum.py `typed`). They are
 * written here, from the very value each case encodes, so a dumped row is exactly what its
 * hash covers: the same type letter, the same integer, bits, text or bytes. */
final class Checksum {
    long total;
    long rows;
    int width = -1; // columns of the first row seen

    private long h;
    private final ArrayNode dump; // the dumped rows; null: no dump asked
    private final int dumpRows;   // how many rows to dump
    private ArrayNode out;        // the row being dumped; null when this row is not

    /** A checksum without a dump. */
    Checksum() {
        this(null, 0);
    }

    /** A checksum that also appends its first dumpRows rows, as typed values, to dump. */
    Checksum(ArrayNode dump, int dumpRows) {
        this.dump = dump;
        this.dumpRows = dumpRows;
    }

    /** The dumped row's next value (nothing when this row is not dumped): its type, and its
     * value as the typed form writes it (float bits and bytes as hex: the callers convert those
     * only for a dumped row). */
    private ObjectNode typed(String type) {
        return out == null ? null : out.addObject().put("type", type);
    }

    private void typed(String type, boolean v) {
        if (out != null)
            typed(type).put("value", v);
    }

    private void typed(String type, long v) {
        if (out != null)
            typed(type).put("value", v);
    }

    private void typed(String type, String v) {
        if (out != null)
            typed(type).put("value", v);
    }

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
        out = dump != null && dump.size() < dumpRows ? dump.addArray() : null;
        h = SplitMix64.FNV_OFFSET;
        for (int c = 0; c < row.n; c++) {
            switch (row.type[c]) {
                case Row.NULL -> {
                    b('N');
                    typed("null");
                }
                case Row.BOOL -> {
                    b('B');
                    b((int) row.l[c]);
                    typed("bool", row.l[c] != 0);
                }
                case Row.INT -> {
                    b('I');
                    u64(row.l[c]);
                    typed("int", row.l[c]);
                }
                case Row.FLOAT -> {
                    long bits = Double.doubleToRawLongBits(row.d[c]);
                    b('F');
                    u64(bits);
                    if (out != null) // big-endian hex, as struct.pack(">d")
                        typed("float", HexFormat.of().toHexDigits(bits));
                }
                case Row.DECIMAL -> { // BigDecimal, or the text of NaN/±Infinity, which have none
                    Object v = row.o[c];
                    String text = v instanceof BigDecimal x ? x.toPlainString() : v.toString();
                    bytes('D', text.getBytes(StandardCharsets.UTF_8));
                    typed("decimal", text);
                }
                case Row.TEXT -> {
                    String text = (String) row.o[c];
                    bytes('S', text.getBytes(StandardCharsets.UTF_8));
                    typed("text", text);
                }
                case Row.BYTES -> {
                    byte[] data = (byte[]) row.o[c];
                    bytes('X', data);
                    if (out != null)
                        typed("bytes", HexFormat.of().formatHex(data));
                }
                case Row.TIMESTAMP -> {
                    Object v = row.o[c];
                    long us = v instanceof OffsetDateTime odt ? Times.micros(odt) : Times.micros((LocalDateTime) v);
                    b('T');
                    u64(us);
                    typed("timestamp", us);
                }
                case Row.DATE -> {
                    int days = (int) Times.days((LocalDate) row.o[c]);
                    b('d');
                    u32(days);
                    typed("date", days);
                }
                case Row.TIME -> {
                    long us = Times.micros((LocalTime) row.o[c]);
                    b('t');
                    u64(us);
                    typed("time", us);
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
