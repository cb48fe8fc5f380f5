#!/usr/bin/env bash
# The numbers in docs/detection.md are the ones `perfdash eval` computes now
# (issue 33). The whole evaluation takes about a minute in a release build on
# two cores, too long for `cargo test` (which checks a reduced evaluation and
# the published choices instead); run this after any change to the analysis,
# the alarm rules or the generator, and regenerate with
#   cargo run --release -- eval --write docs/detection.md
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --quiet -- eval --check docs/detection.md
