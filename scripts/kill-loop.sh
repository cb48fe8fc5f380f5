#!/usr/bin/env bash
# The long kill -9 loop of issue 15: builds the bundled archive 200 times,
# killing each build (SIGKILL) at a random moment within 1.5x a build's
# time, while a reader thread reads every page of the site over and over
# and checks each read against the complete site, byte for byte. After the
# loop one more build runs to completion: there must be one site and no
# leftover folder or lock file beside it.
#
# The loop is tests/integrity.rs::kill_9_at_any_moment_…, which CI runs
# with 12 kills on a small archive; this runs it long, in release mode.
#
#   scripts/kill-loop.sh [KILLS] [ARCHIVE]
set -euo pipefail
cd "$(dirname "$0")/.."
kills="${1:-200}"
archive="$(realpath "${2:-archive}")"
PERFDASH_KILLS="$kills" PERFDASH_KILL_ARCHIVE="$archive" \
  cargo test --release --test integrity kill_9_at_any_moment -- --nocapture 2>&1 \
  | grep -E "kill loop:|test result|panicked|assert" 
