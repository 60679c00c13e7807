#!/usr/bin/env bash
# Installs what Hearth's build and tests need. Idempotent: every step checks first and says
# what it found, so a second run does nothing and prints why.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: %s\n' "$*" >&2; }

if ! command -v cargo >/dev/null 2>&1; then
  say "cargo not found: install the Rust toolchain (rustup) first"
  exit 1
fi
say "rust toolchain: $(rustc --version)"

for tool in rustfmt clippy-driver; do
  if ! command -v "$tool" >/dev/null 2>&1 && ! rustup which "$tool" >/dev/null 2>&1; then
    say "installing rustup component for $tool"
    rustup component add "${tool%-driver}"
  fi
done

if cargo nextest --version >/dev/null 2>&1; then
  say "cargo-nextest: present"
else
  say "cargo-nextest: absent; tests will run with cargo test"
fi

scripts/setup-llm.sh

scripts/setup-embedder.sh
say "done"
