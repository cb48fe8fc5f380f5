#!/usr/bin/env bash
# The memory benchmark of BENCHMARKS.md ("Memory bounded by design"): peak
# RSS (/usr/bin/time) of the release binary on
#   1. eight files over their cap (four plain 300 MB round-N.json, four gzip
#      ones whose content is 300 MB) beside a good round, built at 1, 2 and 8
#      threads (RAYON_NUM_THREADS): each ≤ 400 MB;
#   2. a hey CSV of 50 million requests (`inspect --warmup 0`): bytes per
#      sample = (peak − the same on a 1,000-row file) ÷ 50 M, ≤ 24;
#   3. a folded profile of 2 million distinct frames, given to `inspect` and
#      filed as an endpoint's flame.cpu.collapsed beside a k6 round, built:
#      ≤ 1 GB each;
#   4. a run-level k6 NDJSON of 150,000 URLs as its `name` tag, built: refused
#      with advice, ≤ 500 MB.
# It is a benchmark, not a test: nothing is asserted, the figures are printed.
# Needs /usr/bin/time and ~4 GB of disk in WORK. Usage:
#   scripts/bench-memory.sh [WORK=/tmp/perfdash-memory] [SAMPLES=50000000]
set -euo pipefail
WORK=${1:-/tmp/perfdash-memory}
SAMPLES=${2:-50000000}
cd "$(dirname "$0")/.."
cargo build --release --quiet --example gen_raw --bin perfdash
BIN=$PWD/target/release/perfdash
GEN=$PWD/target/release/examples/gen_raw
mkdir -p "$WORK"

peak() { # peak RSS in MB of a command; its exit code is ignored (builds with warnings exit 1)
  /usr/bin/time -f '%e s wall, %U s user, %S s sys\n%M' -o "$WORK/rss" "$@" >"$WORK/out" 2>"$WORK/err" || true
  echo $(( $(tail -1 "$WORK/rss") / 1024 ))
}
took() { tail -2 "$WORK/rss" | head -1; } # the times of the last `peak`

# 1. Over-cap files.
A=$WORK/overcap
if [ ! -d "$A" ]; then
  mkdir -p "$A/runs/2026-11-02T0300Z/orders"
  cp tests/fixtures/k6-real/round-1.summary.json "$A/runs/2026-11-02T0300Z/orders/round-1.json"
  for n in 2 3 4 5; do # plain: 300 MB of JSON (a summary padded with spaces)
    f="$A/runs/2026-11-02T0300Z/orders/round-$n.json"
    { printf '{"metrics":{}'; head -c 300000000 /dev/zero | tr '\0' ' '; printf '}\n'; } >"$f"
  done
  for n in 6 7 8 9; do # gzip: 300 MB of content in ~300 KB
    f="$A/runs/2026-11-02T0300Z/orders/round-$n.json.gz"
    { printf '{"metrics":{}'; head -c 300000000 /dev/zero | tr '\0' ' '; printf '}\n'; } | gzip -9 >"$f"
  done
fi
echo "== 8 over-cap files (4 plain × 300 MB, 4 gzip of 300 MB content) =="
for t in 1 2 8; do
  rm -rf "$WORK/site" "$WORK/.perfdash-cache"
  echo "threads $t: peak $(RAYON_NUM_THREADS=$t peak "$BIN" build --no-cache --archive "$A" --out "$WORK/site") MB"
done
grep -c "over the limit" "$WORK/err" | sed 's/^/  files refused from their size: /'

# 2. 50 M samples.
[ -f "$WORK/hey-big.csv" ] || "$GEN" hey-rows "$SAMPLES" "$WORK/hey-big.csv"
[ -f "$WORK/hey-small.csv" ] || "$GEN" hey-rows 1000 "$WORK/hey-small.csv"
floor=$(peak "$BIN" inspect --warmup 0 "$WORK/hey-small.csv")
big=$(peak "$BIN" inspect --warmup 0 "$WORK/hey-big.csv")
echo "== $SAMPLES samples (hey CSV, $(du -m "$WORK/hey-big.csv" | cut -f1) MB) =="
echo "peak $big MB, floor $floor MB (1,000 rows): $(( (big - floor) * 1048576 / SAMPLES )) bytes per sample"
grep -E "^$WORK" "$WORK/out" | head -2 || true

# 3. 2 M distinct frames.
[ -f "$WORK/flame.txt" ] || "$GEN" folded-frames 2000000 "$WORK/flame.txt"
echo "== folded profile of 2,000,000 distinct frames ($(du -m "$WORK/flame.txt" | cut -f1) MB) =="
echo "inspect: peak $(peak "$BIN" inspect "$WORK/flame.txt") MB ($(took))"
head -3 "$WORK/out"
P=$WORK/profile
if [ ! -d "$P" ]; then
  mkdir -p "$P/runs/2026-11-02T0300Z/orders"
  cp tests/fixtures/k6-real/round-1.summary.json "$P/runs/2026-11-02T0300Z/orders/round-1.json"
  ln "$WORK/flame.txt" "$P/runs/2026-11-02T0300Z/orders/flame.cpu.collapsed" 2>/dev/null \
    || cp "$WORK/flame.txt" "$P/runs/2026-11-02T0300Z/orders/flame.cpu.collapsed"
fi
rm -rf "$WORK/site" "$WORK/.perfdash-cache"
echo "build: peak $(peak "$BIN" build --no-cache --archive "$P" --out "$WORK/site") MB ($(took))"
ls "$WORK/site/flame/"*/ 2>/dev/null | head -3

# 4. 150 k URLs.
U=$WORK/urls
if [ ! -d "$U" ]; then
  mkdir -p "$U/runs/2026-11-02T0300Z/orders"
  cp tests/fixtures/k6-real/round-1.summary.json "$U/runs/2026-11-02T0300Z/orders/round-1.json"
  "$GEN" k6-urls 150000 "$U/runs/2026-11-02T0300Z/round-1.ndjson"
fi
rm -rf "$WORK/site" "$WORK/.perfdash-cache"
echo "== run-level k6 NDJSON of 150,000 URL names ($(du -m "$U/runs/2026-11-02T0300Z/round-1.ndjson" | cut -f1) MB) =="
echo "build: peak $(peak "$BIN" build --no-cache --archive "$U" --out "$WORK/site") MB"
grep -o "skipped: it splits into [0-9]* endpoints[^:]*" "$WORK/err" | head -1
