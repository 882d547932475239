// Records, at build time, the versions the worker reports in `hello`: the crates as resolved
// in Cargo.lock and the compiler that built it.
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=build.rs");
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    for (krate, var) in [
        ("tokio-postgres", "ABW_V_TOKIO_POSTGRES"),
        ("postgres", "ABW_V_POSTGRES"),
        ("sqlx", "ABW_V_SQLX"),
        ("rusqlite", "ABW_V_RUSQLITE"),
        ("libsqlite3-sys", "ABW_V_LIBSQLITE3_SYS"),
        ("tokio", "ABW_V_TOKIO"),
        ("rust_decimal", "ABW_V_RUST_DECIMAL"),
        ("chrono", "ABW_V_CHRONO"),
        ("deadpool-postgres", "ABW_V_DEADPOOL_POSTGRES"),
        ("deadpool", "ABW_V_DEADPOOL"),
        ("r2d2", "ABW_V_R2D2"),
        ("r2d2_postgres", "ABW_V_R2D2_POSTGRES"),
        ("r2d2_sqlite", "ABW_V_R2D2_SQLITE"),
        ("mysql", "ABW_V_MYSQL"),
        ("mysql_common", "ABW_V_MYSQL_COMMON"),
    ] {
        println!("cargo:rustc-env={var}={}", locked_version(&lock, krate));
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "rustc (unknown version)".into());
    println!("cargo:rustc-env=ABW_RUSTC={version}");
}

fn locked_version(lock: &str, krate: &str) -> String {
    let want = format!("name = \"{krate}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == want {
            if let Some(v) = lines.next().and_then(|l| l.trim().strip_prefix("version = ")) {
                return v.trim_matches('"').to_string();
            }
        }
    }
    "unknown".into()
}
