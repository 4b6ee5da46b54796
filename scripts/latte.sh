#!/usr/bin/env bash
# Prints the path of a latte binary (https://crates.io/crates/latte-cli), the
# Rust Cassandra benchmark that make bench-dbs runs beside ycsbctl, building
# it from crates.io into .tools/latte on first use:
#
#   scripts/latte.sh          # path on stdout, progress on stderr
#
# The build takes about 11 minutes of CPU on a 2-core machine and is done
# once (cargo install --locked, pinned version). Exit status 3 means cargo is
# missing: the caller skips latte and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
LATTE_VERSION="${LATTE_VERSION:-0.29.0}"
root="${LATTE_ROOT:-$PWD/.tools/latte}"
bin="$root/bin/latte"
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "$LATTE_VERSION"; then
  echo "$bin"
  exit 0
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "latte.sh: cargo is not installed, so latte cannot be built (install Rust's cargo to compare with latte)" >&2
  exit 3
fi
echo "latte.sh: building latte-cli $LATTE_VERSION from crates.io into $root (about 11 minutes of CPU, once)" >&2
mkdir -p "$root"
cargo install --locked --quiet --root "$root" --version "$LATTE_VERSION" latte-cli >&2
"$bin" --version >&2
echo "$bin"
