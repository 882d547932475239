package accessbench.worker;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** The CPU time of the whole JVM — the measuring thread, client threads, GC and JIT compiler
 * threads — in nanoseconds, read before and after a loop (never inside it). Java has no
 * getrusage, and what it has for the process (/proc/self/stat utime/stime,
 * OperatingSystemMXBean.getProcessCpuTime) counts 10 ms clock ticks. So every thread of the
 * process is read on its own: /proc/self/task/TID/schedstat, whose first field is the thread's
 * time on CPU in nanoseconds (the scheduler's sum_exec_runtime, the clock behind
 * CLOCK_THREAD_CPUTIME_ID). There is no user/system split at this resolution: the total is the
 * answer's user_ns, and sys_ns is 0.
 *
 * schedstat is exact for a thread that is not running when it is read (the kernel brings the
 * sum up to date whenever a thread leaves the CPU) but lags up to one scheduler tick for a
 * thread on a CPU at that instant — always the reading thread itself. So the reading thread is
 * read through its own CPU clock instead (ThreadMXBean.getCurrentThreadCpuTime: clock_gettime
 * of CLOCK_THREAD_CPUTIME_ID, up to date to the nanosecond), last in a "before" read and first
 * in an "after" read so that reading the others' files is outside its difference. The client
 * threads of a loaded step are parked when read; a GC or JIT thread caught running can lag a
 * tick (4 ms at HZ=250), an error of the moment (the next read catches up), not a coarser clock.
 * Being the whole JVM's, the time can exceed the loop's wall time: a JIT compiler or GC thread
 * working on another CPU during the loop counts too (a barely warmed loop compiles a lot).
 *
 * Threads that start or end between the two reads: the difference is per thread (by TID), so
 * a thread started during the loop counts all of its time, and a thread that ended during the
 * loop takes its time with it (its file is gone) but subtracts nothing — it is simply not in
 * the "after" read. The worker's own threads are kept alive across the "after" read (the
 * clients of a loaded step park until the main thread has read the CPU: Load.loaded). What can
 * end during a loop is a thread of the JVM's or a library's that idles out: an extra JIT
 * compiler thread (UseDynamicNumberOfCompilerThreads; the last one of each compiler is never
 * stopped, and with the two compiler threads of a 2-CPU machine none is), HikariCP's
 * connection adder and pgjdbc's cleaner (both stop after idling for seconds): threads that end
 * because they have nothing to do, so what they take with them is small. A TID reused by a
 * new thread shows a lower time than the old one had: it counts as new. */
final class Cpu {
    private static final Path TASKS = Path.of("/proc/self/task");
    private static final Path THREAD_SELF = Path.of("/proc/thread-self"); // → PID/task/TID
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static boolean warned;

    private final Map<Long, Long> ns = new HashMap<>(); // TID → its nanoseconds on CPU

    /** Read before a loop: every other thread, then the reading thread's own clock. */
    static Cpu before() {
        Cpu c = new Cpu();
        long self = selfTid();
        c.others(self);
        c.ns.put(self, THREADS.getCurrentThreadCpuTime());
        return c;
    }

    /** Read after a loop, by the thread that read before it: its own clock, then the others. */
    static Cpu after() {
        long own = THREADS.getCurrentThreadCpuTime();
        Cpu c = new Cpu();
        long self = selfTid();
        c.ns.put(self, own);
        c.others(self);
        return c;
    }

    /** The CPU time of the JVM from before to this read: per thread, its time now less its
     * time then (all of it for a thread that was not there, or whose TID was reused). */
    long since(Cpu before) {
        long total = 0;
        for (Map.Entry<Long, Long> e : ns.entrySet()) {
            long now = e.getValue();
            Long then = before.ns.get(e.getKey());
            total += then != null && then <= now ? now - then : now;
        }
        return total;
    }

    private static long selfTid() {
        try {
            return Long.parseLong(Files.readSymbolicLink(THREAD_SELF).getFileName().toString());
        } catch (IOException | RuntimeException e) {
            warn(e);
            return -1;
        }
    }

    private void others(long self) {
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                long tid = Long.parseLong(task.getFileName().toString());
                if (tid == self)
                    continue;
                try {
                    String s = new String(Files.readAllBytes(task.resolve("schedstat")), StandardCharsets.US_ASCII);
                    ns.put(tid, Long.parseLong(s.substring(0, s.indexOf(' '))));
                } catch (IOException e) { // the thread ended since the listing
                }
            }
        } catch (IOException | RuntimeException e) {
            warn(e);
        }
    }

    private static void warn(Exception e) {
        if (!warned)
            System.err.println("abworker-java: cannot read the threads' CPU time in /proc: " + e);
        warned = true;
    }
}
