#!/usr/bin/env bash
# Makes a large archive for the cache and build measurements of issue 15
# (BENCHMARKS.md, "Cache"): `perfdash demo` for WEEKS weeks without
# profiles, then every endpoint folder of every run copied until there are
# ENDPOINTS endpoints (copies are named <endpoint>-2, -3, …). The default,
# 156 weeks and 120 endpoints, is the "120-endpoint, 3-year archive":
# 468 runs, about 280 000 round files.
#
#   scripts/big-archive.sh [OUT=/tmp/perfdash-big] [ENDPOINTS=120] [WEEKS=156]
set -euo pipefail
OUT=${1:-/tmp/perfdash-big}
ENDPOINTS=${2:-120}
WEEKS=${3:-156}
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin perfdash
BIN=$PWD/target/release/perfdash
if [ -e "$OUT" ]; then
  echo "$OUT exists; remove it first" >&2
  exit 2
fi
"$BIN" demo --out "$OUT" --weeks "$WEEKS" --no-profiles
for run in "$OUT"/runs/*/; do
  base=$(find "$run" -mindepth 1 -maxdepth 1 -type d | sort)
  have=$(printf '%s\n' "$base" | grep -c .)
  copy=2
  while [ "$have" -lt "$ENDPOINTS" ]; do
    for ep in $base; do
      [ "$have" -lt "$ENDPOINTS" ] || break
      cp -r "$ep" "$ep-$copy"
      have=$((have + 1))
    done
    copy=$((copy + 1))
  done
done
runs=$(find "$OUT/runs" -mindepth 1 -maxdepth 1 -type d | wc -l)
rounds=$(find "$OUT/runs" -name 'round-*' -type f | wc -l)
echo "wrote $OUT: $runs runs, $ENDPOINTS endpoints, $rounds round files, $(du -sh --apparent-size "$OUT/runs" | cut -f1) ($(du -sh "$OUT/runs" | cut -f1) on disk)"
