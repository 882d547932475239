package accessbench.worker;

/** An error answered to the runner: kind protocol | unsupported | db | internal (PROTOCOL.md). */
final class WorkerError extends Exception {
    private static final long serialVersionUID = 1L;
    final String kind;
    final String sqlstate;

    WorkerError(String kind, String message, String sqlstate) {
        super(message);
        this.kind = kind;
        this.sqlstate = sqlstate;
    }

    static WorkerError protocol(String message) {
        return new WorkerError("protocol", message, null);
    }

    static WorkerError unsupported(String message) {
        return new WorkerError("unsupported", message, null);
    }
}
