#!/usr/bin/env bash
# Reproduces the raw-parsing comparison in BENCHMARKS.md:
#   perfdash vs jq computing the same p99 on the same generated k6 NDJSON,
#   JMeter CSV throughput, gzip, and peak RSS.
# Needs: jq, hyperfine, /usr/bin/time (Debian: apt-get install -y jq hyperfine time).
# Usage: scripts/bench-raw.sh [MEGABYTES=300] [WORKDIR=/tmp/perfdash-bench]
set -euo pipefail
MB=${1:-300}
WORK=${2:-/tmp/perfdash-bench}
cd "$(dirname "$0")/.."
mkdir -p "$WORK"

cargo build --release --quiet --example gen_raw --bin perfdash
BIN=target/release/perfdash
GEN=target/release/examples/gen_raw
[ -f "$WORK/big.ndjson" ] || "$GEN" ndjson "$MB" "$WORK/big.ndjson"
[ -f "$WORK/shuffled.ndjson" ] || "$GEN" ndjson-shuffled "$MB" "$WORK/shuffled.ndjson"
# Worst case for the line scan: nothing but duration Points (what
# `jq -c 'select(.metric == "http_req_duration")'` leaves), repeated 12 times (about the size of the others).
for f in big shuffled; do
  if [ ! -f "$WORK/$f-durations.ndjson" ]; then
    grep '"http_req_duration"' "$WORK/$f.ndjson" | grep -v '"Metric"' > "$WORK/$f-durations.one"
    for _ in $(seq 12); do cat "$WORK/$f-durations.one"; done > "$WORK/$f-durations.ndjson"
    rm "$WORK/$f-durations.one"
  fi
done
[ -f "$WORK/big.jtl" ] || "$GEN" jtl "$MB" "$WORK/big.jtl"
[ -f "$WORK/big.ndjson.gz" ] || gzip -1 -k -c "$WORK/big.ndjson" > "$WORK/big.ndjson.gz"
ls -l "$WORK"

# Warm the page cache so both tools read from memory.
cat "$WORK"/*.ndjson "$WORK/big.jtl" > /dev/null

# The same p99: successful http_req_duration samples, no warm-up, linear
# interpolation between closest ranks (k6's definition). perfdash's
# --split-tag names a tag the file does not have, so all samples form one
# group, as in the jq program.
JQ_P99='[inputs | select(.type == "Point" and .metric == "http_req_duration" and .data.tags.expected_response != "false") | .data.value]
  | sort | ((length - 1) * 0.99) as $h | ($h | floor) as $lo | ($h | ceil) as $hi
  | .[$lo] + (.[$hi] - .[$lo]) * ($h - $lo)'
PD="$BIN inspect --warmup 0 --format json --split-tag no-such-tag"

echo "== p99 from both (must match) =="
"$BIN" inspect --warmup 0 --format json --split-tag no-such-tag "$WORK/big.ndjson" | grep '"p99_ms"'
"$BIN" inspect --warmup 0 --format json --split-tag no-such-tag "$WORK/shuffled.ndjson" | grep '"p99_ms"'
jq -n "$JQ_P99" "$WORK/big.ndjson"

echo "== NDJSON: perfdash (one core: RAYON_NUM_THREADS=1) vs jq =="
RAYON_NUM_THREADS=1 hyperfine --warmup 1 --runs 5 \
  --command-name "perfdash inspect (NDJSON, ${MB} MB)" "$PD $WORK/big.ndjson" \
  --export-json "$WORK/perfdash-ndjson.json"
# jq takes minutes on this file: one run is enough to compare orders of magnitude.
hyperfine --runs "${JQ_RUNS:-1}" \
  --command-name "jq p99 (NDJSON, ${MB} MB)" "jq -n '$JQ_P99' $WORK/big.ndjson" \
  --export-json "$WORK/jq-ndjson.json"
python3 - "$WORK" "$WORK/big.ndjson" <<'PY'
import json, os, sys
work, f = sys.argv[1], sys.argv[2]
size = os.path.getsize(f)
pd = json.load(open(f"{work}/perfdash-ndjson.json"))["results"][0]
jq = json.load(open(f"{work}/jq-ndjson.json"))["results"][0]
print(f"perfdash: median {pd['median']:.3f} s = {size / pd['median'] / 1e9:.2f} GB/s (user {pd['user']:.3f} s = {size / pd['user'] / 1e9:.2f} GB/s of CPU)")
print(f"jq:       {jq['median']:.1f} s = {size / jq['median'] / 1e6:.1f} MB/s")
print(f"speed-up: {jq['median'] / pd['median']:.0f}x (wall), {jq['user'] / max(pd['user'], 1e-3):.0f}x (user CPU)")
PY

echo "== NDJSON in other key orders (same records), one core =="
RAYON_NUM_THREADS=1 hyperfine --warmup 1 --runs 5 \
  --command-name "perfdash inspect (NDJSON, k6 key order)" "$PD $WORK/big.ndjson" \
  --command-name "perfdash inspect (NDJSON, shuffled keys)" "$PD $WORK/shuffled.ndjson" \
  --command-name "perfdash inspect (duration Points only, k6 key order)" "$PD $WORK/big-durations.ndjson" \
  --command-name "perfdash inspect (duration Points only, shuffled keys)" "$PD $WORK/shuffled-durations.ndjson" \
  --export-json "$WORK/shuffled.json"
python3 - "$WORK/shuffled.json" "$WORK/big.ndjson" "$WORK/shuffled.ndjson" "$WORK/big-durations.ndjson" "$WORK/shuffled-durations.ndjson" <<'PY2'
import json, os, sys
for r, f in zip(json.load(open(sys.argv[1]))["results"], sys.argv[2:]):
    size = os.path.getsize(f)
    cpu = r["user"] + r["system"]
    print(f"{r['command']}: median {r['median']:.3f} s, {cpu:.3f} CPU-s = {size / cpu / 1e9:.2f} GB/s per core")
PY2

echo "== one big file on all cores (sliced) against one core =="
hyperfine --warmup 1 --runs 5 \
  --command-name "NDJSON, 1 thread" "RAYON_NUM_THREADS=1 $PD $WORK/big.ndjson" \
  --command-name "NDJSON, all cores" "$PD $WORK/big.ndjson" \
  --command-name "JMeter CSV, 1 thread" "RAYON_NUM_THREADS=1 $BIN inspect --warmup 0 --format json $WORK/big.jtl" \
  --command-name "JMeter CSV, all cores" "$BIN inspect --warmup 0 --format json $WORK/big.jtl" \
  --export-markdown "$WORK/sliced.md"

echo "== NDJSON gzip, JMeter CSV =="
RAYON_NUM_THREADS=1 hyperfine --warmup 1 --runs 3 \
  --command-name "perfdash inspect (NDJSON.gz)" "$PD $WORK/big.ndjson.gz" \
  --command-name "gzip -dc (NDJSON.gz) > /dev/null" "gzip -dc $WORK/big.ndjson.gz > /dev/null" \
  --command-name "perfdash inspect (JMeter CSV, split by label)" "$BIN inspect --warmup 0 --format json $WORK/big.jtl" \
  --export-markdown "$WORK/gz-jtl.md"

echo "== peak RSS =="
for f in big.ndjson big.ndjson.gz big.jtl; do
  /usr/bin/time -v $PD "$WORK/$f" 2>&1 >/dev/null | grep -E "Maximum resident|Elapsed" | sed "s|^|$f: |"
done
/usr/bin/time -v jq -n "$JQ_P99" "$WORK/big.ndjson" 2>&1 >/dev/null | grep -E "Maximum resident|Elapsed" | sed "s|^|jq: |"
