#!/usr/bin/env bash
# Records tests/fixtures/inputs/: real outputs of hey, ab, Artillery, Locust
# (--json and --csv of one run), py-spy (chrometrace), Go pprof (CPU and
# heap) and JFR (JDK 17), each against or of a small loopback program, and
# the independent figures the tests compare perfdash with (computed here by
# the tools themselves or by plain Python beside them, never by perfdash).
#
# Needs: hey, ab (apache2-utils), artillery (npm -g), locust, py-spy, go,
# java/javac/jfr (JDK 17). All traffic stays on 127.0.0.1 (ports from
# $PORT, default 18410); every load run stops by itself within seconds.
# Takes about a minute and a half. Re-recording gives other numbers: the
# tests compare perfdash with the figures recorded beside each file.
set -euo pipefail
out=$(cd "${1:-tests/fixtures/inputs}" && pwd)
port=${PORT:-18410}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
server_pid=
trap 'if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi; rm -rf "$work"' EXIT
base=http://127.0.0.1:$port

cat >"$work/server.py" <<'PY'
# /orders answers 200 after 2-6 ms, /fail 500 after the same; anything else 404.
import random, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        code = 500 if self.path.startswith("/fail") else 200 if self.path.startswith("/orders") else 404
        time.sleep(0.002 + random.random() * 0.004)
        body = b'{"ok":true}'
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
python3 "$work/server.py" "$port" & server_pid=$!
sleep 1

# --- hey: one row per request (response-time in s, offset from the start in s)
mkdir -p "$out/hey"
hey -z 6s -c 2 -q 60 -o csv "$base/orders" >"$out/hey/orders.csv"
hey -z 6s -c 2 -q 60 "$base/orders" >/dev/null # warm the path once more; not kept
hey -z 4s -c 2 -q 30 -o csv "$base/fail" >"$out/hey/fail.csv"
hey -z 4s -c 2 -q 30 "$base/fail" >"$out/hey/fail.txt" || true
hey -version 2>/dev/null | head -1 >"$out/hey/VERSION" || echo "hey (Debian $(dpkg-query -W -f='${Version}' hey))" >"$out/hey/VERSION"

# --- ab: -g (one row per request, start second, times in whole ms) and -e (percentiles) of one run
mkdir -p "$out/ab"
ab -q -t 3 -n 1000000 -c 1 -g "$out/ab/orders.tsv" -e "$out/ab/orders.csv" "$base/orders" >"$out/ab/orders.txt"
ab -V | head -1 >"$out/ab/VERSION"

# --- Artillery 2.x: a JSON report of a run with 200s and 500s, and of a run whose target is down
mkdir -p "$out/artillery"
cat >"$out/artillery/script.yml" <<YML
config:
  target: "$base"
  phases:
    - duration: 6
      arrivalRate: 10
scenarios:
  - flow:
      - get:
          url: "/orders"
      - get:
          url: "/fail"
YML
artillery run --quiet --output "$out/artillery/report.json" "$out/artillery/script.yml" >"$out/artillery/report.txt" 2>&1
sed "s#$base#http://127.0.0.1:$((port + 1))#" "$out/artillery/script.yml" >"$work/down.yml"
sed -i 's/duration: 6/duration: 2/' "$work/down.yml"
artillery run --quiet --output "$out/artillery/down.json" "$work/down.yml" >"$out/artillery/down.txt" 2>&1 || true
artillery version 2>/dev/null | grep -i artillery | head -1 >"$out/artillery/VERSION"

# --- Locust: --json on stdout and --csv of the same run
mkdir -p "$out/locust"
cat >"$out/locust/locustfile.py" <<'PY'
from locust import HttpUser, constant, task

class Shopper(HttpUser):
    wait_time = constant(0.02)

    @task(2)
    def orders(self):
        self.client.get("/orders")

    @task(1)
    def fail(self):
        self.client.get("/fail")
PY
(cd "$work" && locust -f "$out/locust/locustfile.py" --headless -u 3 -r 3 -t 6s -H "$base" \
    --json --csv "$work/round-1" >"$out/locust/round-1.json" 2>/dev/null) || true
cp "$work/round-1_stats.csv" "$out/locust/round-1_stats.csv"
locust --version | head -1 >"$out/locust/VERSION"

kill "$server_pid"; server_pid=

# --- py-spy: a chrometrace of a CPU-bound Python program, and its own raw (folded) output
mkdir -p "$out/pyspy"
cat >"$out/pyspy/work.py" <<'PY'
import hashlib, time

def digest(n):
    h = b""
    for _ in range(n):
        h = hashlib.sha256(h + b"x").digest()
    return h

def sort_work(n):
    return sorted((i * 7919) % 10007 for i in range(n))

def main():
    end = time.time() + 2.5
    while time.time() < end:
        digest(2000)
        sort_work(20000)

main()
PY
py-spy record --rate 100 --format chrometrace -o "$out/pyspy/trace.json" -- python3 "$out/pyspy/work.py" >/dev/null 2>&1
py-spy --version >"$out/pyspy/VERSION"

# --- Go: a CPU profile (runtime/pprof.StartCPUProfile) and a heap profile of a small program
mkdir -p "$out/go"
cp "$here/input-fixtures/cpuwork.go" "$work/main.go"
(cd "$work" && printf 'module example.com/cpuwork\n\ngo 1.19\n' >go.mod && go build -o cpuwork . \
    && ./cpuwork "$out/go/cpu.pprof" "$out/go/heap.pprof")
go tool pprof -traces "$out/go/cpu.pprof" >"$out/go/cpu.traces.txt" 2>/dev/null
go version >"$out/go/VERSION"

# --- JFR: execution samples of a small Java program, and a recording without them
mkdir -p "$out/jfr"
cp "$here/input-fixtures/Work.java" "$here/input-fixtures/samples.jfc" "$here/input-fixtures/nosamples.jfc" "$work/"
(cd "$work" && javac Work.java \
    && java -XX:StartFlightRecording=settings="$work/samples.jfc",filename="$out/jfr/samples.jfr" Work 3000 >/dev/null 2>&1 \
    && java -XX:StartFlightRecording=settings="$work/nosamples.jfc",filename="$out/jfr/no-samples.jfr" Work 1500 >/dev/null 2>&1)
jfr print --json --stack-depth 2048 --events jdk.ExecutionSample "$out/jfr/samples.jfr" >"$work/samples.json"
java -version 2>&1 | head -1 >"$out/jfr/VERSION"

# --- the independent figures
python3 "$here/input-fixtures/expected.py" "$out" "$work/samples.json"
ls -la "$out"/*
