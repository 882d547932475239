package accessbench.worker;

/** A generated timestamp (no time zone): microseconds since 1970-01-01 00:00:00. Drivers adapt
 * it before the clock starts (PostgreSQL: LocalDateTime; SQLite: ISO text). */
record GenTimestamp(long micros) {
}
