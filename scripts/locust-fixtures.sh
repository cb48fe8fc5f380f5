#!/usr/bin/env bash
# Regenerates tests/fixtures/locust-real/: real Locust `--csv` output of
# six runs of five rounds each against a small loopback server.
#
#   runs 1-4: the baseline (/orders sleeps 200 ms, /stock 100 ms)
#   run 5:    unchanged code, run again
#   run 6:    /orders twice as slow (400 ms): a real regression
#
# The sleeps are long so that the noise of a shared 2-core machine (where
# Locust's own client is CPU-bound) stays small beside them.
#
# Needs `pip install locust` (tried with 2.47.0). All traffic stays on
# 127.0.0.1 and every Locust run stops by itself after ROUND_SECONDS.
# Takes about nine minutes. The run ids are the real start times, so the
# files are what a user's CI would archive.
set -euo pipefail

out=${1:-tests/fixtures/locust-real}
ROUND_SECONDS=${ROUND_SECONDS:-15}
port=${PORT:-18089}
work=$(mktemp -d)
trap 'kill "${server_pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT

cat >"$work/server.py" <<'EOF'
# A loopback HTTP server whose endpoints sleep as the environment says.
import os, sys, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

DELAYS = {"/orders": float(os.environ["ORDERS_MS"]) / 1000, "/stock": float(os.environ["STOCK_MS"]) / 1000}

class Handler(BaseHTTPRequestHandler):
    # Keep-alive: one connection per Locust user. With HTTP/1.0 every
    # request opened a connection, the listen queue overflowed, and
    # dropped SYNs cost a 1 s retransmit (p99s of 1.3 s at a 200 ms sleep).
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        delay = DELAYS.get(self.path)
        if delay is None:
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
        time.sleep(delay)
        body = b'{"ok":true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

class Server(ThreadingHTTPServer):
    request_queue_size = 128
    daemon_threads = True

Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
EOF

cat >"$work/locustfile.py" <<'EOF'
from locust import HttpUser, constant, task

class Shopper(HttpUser):
    wait_time = constant(0.05)

    @task(2)
    def orders(self):
        self.client.get("/orders")

    @task(1)
    def stock(self):
        self.client.get("/stock")
EOF

run() { # run <orders ms> <stock ms> <note>
    ORDERS_MS=$1 STOCK_MS=$2 python3 "$work/server.py" "$port" &
    server_pid=$!
    sleep 1
    local id dir
    id=$(date -u +%Y-%m-%dT%H%M%SZ)
    dir="$out/runs/$id"
    mkdir -p "$dir"
    printf 'started_at = %s\nnotes = "%s"\nlocust_version = "%s"\n' \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$3" "$(locust --version 2>&1 | awk '{print $2; exit}')" >"$dir/run.toml"
    for n in 1 2 3 4 5; do
        locust -f "$work/locustfile.py" --headless -u 10 -r 10 -t "${ROUND_SECONDS}s" \
            --host "http://127.0.0.1:$port" --csv "$dir/round-$n" --only-summary \
            --loglevel WARNING >/dev/null 2>&1
    done
    kill "$server_pid"
    wait "$server_pid" 2>/dev/null || true
}

mkdir -p "$out/runs"
for i in 1 2 3 4; do run 200 100 "baseline $i"; done
run 200 100 "unchanged code, run again"
run 400 100 "/orders twice as slow"
echo "wrote $out"
