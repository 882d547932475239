package accessbench.worker;

/** One decoded row: each column's native Java value, in typed slots so that integers, floats
 * and booleans are not boxed. Drivers refill the same Row for every row they read. */
final class Row {
    static final byte NULL = 0, BOOL = 1, INT = 2, FLOAT = 3, DECIMAL = 4, TEXT = 5, BYTES = 6,
            TIMESTAMP = 7, DATE = 8, TIME = 9;

    int n;
    byte[] type = new byte[16];
    long[] l = new long[16];     // BOOL (0/1), INT
    double[] d = new double[16]; // FLOAT
    Object[] o = new Object[16]; // DECIMAL BigDecimal, TEXT String, BYTES byte[],
                                 // TIMESTAMP LocalDateTime/OffsetDateTime, DATE LocalDate, TIME LocalTime

    void reset(int ncols) {
        if (ncols > type.length) {
            int cap = Math.max(ncols, type.length * 2);
            type = new byte[cap];
            l = new long[cap];
            d = new double[cap];
            o = new Object[cap];
        }
        n = ncols;
    }

    void setNull(int c) {
        type[c] = NULL;
        o[c] = null;
    }

    void setLong(int c, long v) {
        type[c] = INT;
        l[c] = v;
    }

    void setBool(int c, boolean v) {
        type[c] = BOOL;
        l[c] = v ? 1 : 0;
    }

    void setDouble(int c, double v) {
        type[c] = FLOAT;
        d[c] = v;
    }

    void set(int c, byte t, Object v) {
        type[c] = v == null ? NULL : t;
        o[c] = v;
    }

    /** Column c's value as an object (Boolean, Long, Double, or the object slot's), null for
     * NULL: a key to keep an entity once by, or a value to bind (association loading). */
    Object value(int c) {
        return switch (type[c]) {
            case NULL -> null;
            case BOOL -> l[c] != 0;
            case INT -> l[c];
            case FLOAT -> d[c];
            default -> o[c];
        };
    }

    /** This row made of n columns of src from column from (a joined row's segment). */
    void copy(Row src, int from, int n) {
        reset(n);
        System.arraycopy(src.type, from, type, 0, n);
        System.arraycopy(src.l, from, l, 0, n);
        System.arraycopy(src.d, from, d, 0, n);
        System.arraycopy(src.o, from, o, 0, n);
    }
}
