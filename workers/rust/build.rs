// Records, at build time, the versions the worker reports in `hello`: the crates as resolved
// in Cargo.lock and the compiler that built it.
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=build.rs");
    // Every locked crate as ABW_V_<NAME> (upper case, '-' as '_'), the first version listed
    // where a crate is locked twice: a driver's crate needs no line here.
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    let mut seen = std::collections::HashSet::new();
    for (krate, version) in locked_versions(&lock) {
        let var = format!("ABW_V_{}", krate.to_uppercase().replace('-', "_"));
        if seen.insert(var.clone()) {
            println!("cargo:rustc-env={var}={version}");
        }
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

fn locked_versions(lock: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = lock.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        if let Some(name) = line.strip_prefix("name = ") {
            if let Some(v) = lines.peek().and_then(|l| l.strip_prefix("version = ")) {
                out.push((name.trim_matches('"').to_string(), v.trim_matches('"').to_string()));
            }
        }
    }
    out
}
