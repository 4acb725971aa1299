// Reads the versions of the crates that matter from Cargo.lock, so that the
// program reports the quinn it was built with.
use std::fs;

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = fs::read_to_string("Cargo.lock").unwrap_or_default();
    for (krate, var) in [
        ("quinn", "QUINN"),
        ("quinn-proto", "QUINN_PROTO"),
        ("quinn-udp", "QUINN_UDP"),
        ("rustls", "RUSTLS"),
        ("tokio", "TOKIO"),
    ] {
        let version = version_of(&lock, krate).unwrap_or_else(|| "unknown".to_string());
        println!("cargo:rustc-env=QUICBENCH_{var}_VERSION={version}");
    }
}

fn version_of(lock: &str, krate: &str) -> Option<String> {
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{krate}\"") {
            let v = lines.next()?.trim().strip_prefix("version = \"")?.strip_suffix('"')?;
            return Some(v.to_string());
        }
    }
    None
}
