package accessbench.worker;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** The worker process's user and system CPU time, from /proc/self/stat (utime, stime): the
 * whole JVM — the measuring thread, GC and JIT compiler threads together — in clock ticks of
 * 1/100 s (USER_HZ, fixed at 100 in Linux's ABI), so 10 ms resolution. Java has no getrusage;
 * OperatingSystemMXBean.getProcessCpuTime has the same tick resolution and no user/sys split. */
final class Cpu {
    static final long NS_PER_TICK = 10_000_000L;
    private static final Path STAT = Path.of("/proc/self/stat");

    long userNs, sysNs;

    static Cpu read() {
        Cpu c = new Cpu();
        try {
            String s = new String(Files.readAllBytes(STAT), StandardCharsets.US_ASCII);
            // "pid (comm) state ppid …": fields after the command's closing parenthesis, from
            // field 3 (state); utime and stime are fields 14 and 15.
            String[] f = s.substring(s.lastIndexOf(')') + 2).trim().split(" +");
            c.userNs = Long.parseLong(f[11]) * NS_PER_TICK;
            c.sysNs = Long.parseLong(f[12]) * NS_PER_TICK;
        } catch (IOException | RuntimeException e) {
            System.err.println("abworker-java: cannot read /proc/self/stat: " + e);
        }
        return c;
    }
}
