#!/usr/bin/env bash
# Reproduces the scale table in BENCHMARKS.md (issue 18): for demo archives
# of several sizes, the time of
#   cat         reading every file of the archive once (the floor),
#   cold        `perfdash build --no-cache`,
#   warm        `perfdash build` again, nothing changed (round cache in use),
#   +1 run      `perfdash build` after one new run was added,
#   check       `perfdash check --latest --site SITE` (the build's cache, as CI uses it),
# with peak RSS (/usr/bin/time) and the size of the site.
#
# Needs: hyperfine, /usr/bin/time, python3 (Debian: apt-get install -y hyperfine time).
# Usage: scripts/bench-scale.sh [WORKDIR=/tmp/perfdash-scale]
#   SIZES="12x26 12x156 12x312 120x156"   endpoints x weeks (3 runs a week, 5 rounds)
#   RUNS=3                                 hyperfine runs per measurement
#   BIN=target/release/perfdash            the binary to measure (to compare builds)
#   TAG=""                                 suffix of the results and site folders (e.g. -main)
# Archives are generated once per size (`perfdash demo --endpoints N --weeks W`)
# and reused; delete WORKDIR to start afresh. The script writes only into WORKDIR.
set -euo pipefail
WORK=${1:-/tmp/perfdash-scale}
SIZES=${SIZES:-"12x26 12x156 12x312 120x156"}
RUNS=${RUNS:-3}
cd "$(dirname "$0")/.."
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --bin perfdash
  BIN=$PWD/target/release/perfdash
fi
mkdir -p "$WORK"
TAG=${TAG:-}
RESULTS="$WORK/results$TAG"
mkdir -p "$RESULTS"

for size in $SIZES; do
  endpoints=${size%x*}
  weeks=${size#*x}
  A="$WORK/archive-$size"
  S="$WORK/site$TAG-$size"
  NEW_TEMPLATE="$WORK/new-run-$size"
  if [ ! -d "$A/runs" ]; then
    rm -rf "$A"
    echo "== generating $size"
    /usr/bin/time -f "generated $size in %e s (%U s user, %S s sys), peak RSS %M KB" \
      "$BIN" demo --out "$A" --endpoints "$endpoints" --weeks "$weeks" 2>&1 | tail -2
  fi
  # One more run: a copy of the latest one, a day later. (A demo history of
  # any length ends in November 2026, so the copy is dated in the past and
  # time trust keeps it: no PERFDASH_NOW needed.)
  last=$(ls "$A/runs" | sort | tail -1)
  next=$(python3 -c "import datetime,sys; t=datetime.datetime.strptime(sys.argv[1], '%Y-%m-%dT%H%MZ'); n=t+datetime.timedelta(days=1); print(n.strftime('%Y-%m-%dT%H%MZ'), n.strftime('%Y-%m-%dT%H:%M:00Z'))" "$last")
  read -r next_id next_time <<< "$next"
  rm -rf "$NEW_TEMPLATE" "$A/runs/$next_id"
  cp -a "$A/runs/$last" "$NEW_TEMPLATE"
  sed -i "s/^started_at = .*/started_at = $next_time/" "$NEW_TEMPLATE/run.toml"

  files=$(find "$A" -type f | wc -l)
  rounds=$(find "$A/runs" -name 'round-*' | wc -l)
  bytes=$(du -sb "$A" | cut -f1)
  echo "== $size: $files files ($rounds round files), $bytes bytes"
  echo "{\"size\": \"$size\", \"files\": $files, \"rounds\": $rounds, \"bytes\": $bytes}" > "$RESULTS/$size-archive.json"

  # The floor: read every file once (from the page cache, like the builds).
  hyperfine --warmup 1 --runs "$RUNS" --export-json "$RESULTS/$size-cat.json" \
    --command-name cat "find '$A' -type f -print0 | xargs -0 cat > /dev/null"
  hyperfine --warmup 0 --runs "$RUNS" --export-json "$RESULTS/$size-cold.json" \
    --command-name cold "'$BIN' build --archive '$A' --out '$S' --no-cache --force -q"
  hyperfine --warmup 1 --runs "$RUNS" --export-json "$RESULTS/$size-warm.json" \
    --command-name warm "'$BIN' build --archive '$A' --out '$S' --force -q"
  hyperfine --runs "$RUNS" --export-json "$RESULTS/$size-plus1.json" \
    --prepare "rm -rf '$A/runs/$next_id' && '$BIN' build --archive '$A' --out '$S' --force -q && cp -a '$NEW_TEMPLATE' '$A/runs/$next_id'" \
    --command-name "+1 run" "'$BIN' build --archive '$A' --out '$S' --force -q"
  rm -rf "$A/runs/$next_id"
  hyperfine --warmup 1 --runs "$RUNS" -i --export-json "$RESULTS/$size-check.json" \
    --command-name check "'$BIN' check --archive '$A' --latest --site '$S'"
  # Peak RSS of each command, and the site it leaves.
  rss() { /usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -1; }
  cold_rss=$(rss "$BIN" build --archive "$A" --out "$S" --no-cache --force -q)
  warm_rss=$(rss "$BIN" build --archive "$A" --out "$S" --force -q)
  check_rss=$(rss "$BIN" check --archive "$A" --latest --site "$S" || true)
  site_bytes=$(du -sb "$S" | cut -f1)
  site_files=$(find "$S" -type f | wc -l)
  echo "{\"cold_rss_kb\": $cold_rss, \"warm_rss_kb\": $warm_rss, \"check_rss_kb\": $check_rss, \"site_bytes\": $site_bytes, \"site_files\": $site_files}" \
    > "$RESULTS/$size-memory.json"
done

python3 - "$RESULTS" $SIZES <<'PY'
import json, sys
results, sizes = sys.argv[1], sys.argv[2:]
def load(size, what):
    return json.load(open(f"{results}/{size}-{what}.json"))
def timing(size, what):
    r = load(size, what)["results"][0]
    return r["median"], r["user"] + r["system"]
print("| archive | round files | archive MB | cat | cold --no-cache | warm, no change | +1 run | check --latest | peak RSS cold / warm / check | site |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for size in sizes:
    a, m = load(size, "archive"), load(size, "memory")
    cat_wall, cat_cpu = timing(size, "cat")
    cells = []
    for what in ["cold", "warm", "plus1", "check"]:
        wall, cpu = timing(size, what)
        cells.append(f"{wall:.2f} s ({cpu:.2f} CPU-s, {wall / cat_wall:.1f}× cat wall, {cpu / cat_cpu:.1f}× cat CPU)")
    e, w = size.split("x")
    print(f"| {e} ep × {w} w | {a['rounds']:,} | {a['bytes'] / 1e6:.0f} | {cat_wall:.2f} s ({cat_cpu:.2f} CPU-s) | "
          + " | ".join(cells)
          + f" | {m['cold_rss_kb'] / 1024:.0f} / {m['warm_rss_kb'] / 1024:.0f} / {m['check_rss_kb'] / 1024:.0f} MB"
          + f" | {m['site_bytes'] / 1e6:.0f} MB, {m['site_files']:,} files |")
PY
