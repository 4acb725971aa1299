#!/usr/bin/env bash
# Builds quicbench-quinn offline from Debian's packaged crates, into
# .cache/quinn/ at the repository's root (ignored). Installs nothing: the
# crates come from `apt-get install librust-quinn-dev librust-rustls-pemfile-dev`
# and cargo from the `cargo` package (or rustup). Prints the binary's path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
target=${QUICBENCH_QUINN_TARGET:-$root/.cache/quinn}
registry=/usr/share/cargo/registry

if ! command -v cargo >/dev/null 2>&1; then
  echo "quinn/build.sh: cargo is not installed: apt-get install cargo" >&2
  exit 3
fi
missing=()
for crate in quinn-0.9 quinn-proto-0.9 quinn-udp-0.3 rustls-0.20 rustls-pemfile-1 tokio-1; do
  if ! compgen -G "$registry/$crate.*" >/dev/null; then
    missing+=("$crate")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "quinn/build.sh: Debian's packaged crates are missing from $registry (${missing[*]}):" \
    "apt-get install librust-quinn-dev librust-rustls-pemfile-dev" >&2
  exit 3
fi
cd "$here"
# --locked: the committed Cargo.lock is what is built; a changed crate set
# fails here rather than building something else.
cargo build --offline --locked --release --target-dir "$target" >&2
echo "$target/release/quicbench-quinn"
