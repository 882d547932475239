"""The runner: owns the experiment's clock (order, warmup, trials, resets, timeouts)."""
