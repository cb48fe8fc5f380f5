#!/usr/bin/env bash
# The bundled archive built from a folder and from a loopback s3s-fs bucket
# (BENCHMARKS.md, issue 37): cold, warm, +1 run. Needs `cargo build --release`
# and s3s-fs on PATH (cargo install s3s-fs --version 0.14.1 --features binary).
# ARCHIVE=<folder> benchmarks another archive (e.g. one written by
# `perfdash demo --endpoints 120 --weeks 156 --no-profiles --out …`);
# PERFDASH=<binary> another build.
set -euo pipefail
B=${BENCH_DIR:-$(mktemp -d)}; REPO=$(cd "$(dirname "$0")/.." && pwd)
P=${PERFDASH:-$REPO/target/release/perfdash}; SRC=${ARCHIVE:-$REPO/archive}
rm -rf $B/root $B/local $B/cache $B/site-* $B/.perfdash-cache
mkdir -p $B/root/perf/bundled
last=$(ls $SRC/runs | tail -1)
cp -r $SRC/. $B/root/perf/bundled/
rm -rf $B/root/perf/bundled/runs/$last
cp -r $B/root/perf/bundled $B/local
s3s-fs --host 127.0.0.1 --port 18015 --access-key AK --secret-key SK $B/root > $B/s3s.log 2>&1 &
S3PID=$!
trap 'kill $S3PID' EXIT
sleep 1
export AWS_ENDPOINT_URL=http://127.0.0.1:18015 AWS_ACCESS_KEY_ID=AK AWS_SECRET_ACCESS_KEY=SK AWS_REGION=us-east-1 XDG_CACHE_HOME=$B/cache
# s3s-fs walks the whole bucket for every listing: at 289k objects one
# listing takes seconds, 16 in flight, so object_store's 30 s request
# timeout (AWS_TIMEOUT, read by the client from the environment) is raised.
export AWS_TIMEOUT=${AWS_TIMEOUT:-15m}
t() { /usr/bin/time -f "  $1: %e s wall, %U+%S s CPU, %M KB" "${@:2}" 2>&1 | grep -E "^  |^objects:|^built|^up to date" ; }
echo "uptime: $(uptime); AWS_TIMEOUT=$AWS_TIMEOUT"
echo "local"
t cold $P build -v --archive $B/local --out $B/site-local
sleep 3
t warm $P build -v --archive $B/local --out $B/site-local
echo "s3"
t cold $P build -v --archive s3://perf/bundled --out $B/site-s3
sleep 3
t warm $P build -v --archive s3://perf/bundled --out $B/site-s3
cp -r $SRC/runs/$last $B/local/runs/
cp -r $SRC/runs/$last $B/root/perf/bundled/runs/
sleep 3
echo "+1 run ($last: $(find $SRC/runs/$last -type f | wc -l) files)"
t local+1 $P build -v --archive $B/local --out $B/site-local
t s3+1 $P build -v --archive s3://perf/bundled --out $B/site-s3
diff -r $B/site-local $B/site-s3 >/dev/null && echo "sites identical" || echo "SITES DIFFER"
echo "objects: $(find $B/root/perf/bundled -type f | wc -l)"
echo "uptime: $(uptime)"
