#!/usr/bin/env python3
"""The figures tests/input_formats.rs compares perfdash with, computed
without perfdash: plain Python over the files as the tools wrote them, or
taken from the tools' own output (Locust's _stats.csv of the same run,
`go tool pprof -traces`, `jfr print --json`).

Usage: expected.py FIXTURES_DIR JFR_PRINT_JSON
Writes FIXTURES_DIR/<tool>/expected.json (and .collapsed files for profiles).
"""
import collections, csv, json, math, sys

out, jfr_json = sys.argv[1], sys.argv[2]


def linear(sorted_values, p):
    """Hyndman & Fan type 7 (numpy's linear, k6's p(N))."""
    n = len(sorted_values)
    h = p / 100 * (n - 1)
    lo, hi = math.floor(h), math.ceil(h)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (h - lo)


def stats(samples, warmup_s, time_is_start=True):
    """samples: (t_us, ms, ok). docs/raw-results.md "Warm-up trimming"."""
    start = min(t for t, _, _ in samples)
    kept = [s for s in samples if s[0] >= start + round(warmup_s * 1e6)]
    lat = sorted(ms for _, ms, ok in kept if ok)
    first = min(t for t, _, _ in kept)
    last = max(t + (round(ms * 1000) if time_is_start else 0) for t, ms, _ in kept)
    mean = sum(lat) / len(lat)
    return {
        "count": len(kept),
        "throughput_rps": len(kept) / ((last - first) / 1e6),
        "mean_ms": mean,
        "stddev_ms": math.sqrt(sum((x - mean) ** 2 for x in lat) / len(lat)),
        "min_ms": lat[0],
        "p50_ms": linear(lat, 50),
        "p90_ms": linear(lat, 90),
        "p95_ms": linear(lat, 95),
        "p99_ms": linear(lat, 99),
        "max_ms": lat[-1],
        "error_rate": sum(1 for s in kept if not s[2]) / len(kept),
    }


def write(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=1, sort_keys=True)
        f.write("\n")


# hey -o csv: response-time (s), ..., status-code, offset (s from the start, request start)
hey = {}
for name in ["orders", "fail"]:
    rows = list(csv.DictReader(open(f"{out}/hey/{name}.csv")))
    samples = [(round(float(r["offset"]) * 1e6), float(r["response-time"]) * 1000, int(r["status-code"]) < 400) for r in rows]
    hey[name] = {"rows": len(rows)}
    if any(ok for _, _, ok in samples):
        hey[name].update({"warmup_0": stats(samples, 0), "warmup_1": stats(samples, 1)})
write(f"{out}/hey/expected.json", hey)

# ab -g: starttime, seconds (start, whole s), ctime, dtime, ttime (ms, whole), wait
rows = list(csv.DictReader(open(f"{out}/ab/orders.tsv"), delimiter="\t"))
samples = [(int(r["seconds"]) * 1_000_000, float(r["ttime"]), True) for r in rows]
ab = {"rows": len(rows), "warmup_0": stats(samples, 0), "warmup_1": stats(samples, 1)}
for k in ["warmup_0", "warmup_1"]:
    ab[k]["error_rate"] = None  # ab's -g file does not say which requests failed
# ab -e: "Percentage served,Time in ms", ab's own percentiles of the same run
ab["percentiles"] = {int(r["Percentage served"]): float(r["Time in ms"]) for r in csv.DictReader(open(f"{out}/ab/orders.csv"))}
write(f"{out}/ab/expected.json", ab)

# Artillery: the per-endpoint summaries and codes of its report, as plain dict look-ups
def artillery(report):
    agg = json.load(open(report))["aggregate"]
    counters, summaries = agg["counters"], agg["summaries"]
    res = {}
    prefix = "plugins.metrics-by-endpoint.response_time."
    for key, s in summaries.items():
        if not key.startswith(prefix):
            continue
        url = key[len(prefix):]
        codes = {k.rsplit(".", 1)[1]: v for k, v in counters.items() if k.startswith(f"plugins.metrics-by-endpoint.{url}.codes.")}
        errors = sum(v for k, v in counters.items() if k.startswith(f"plugins.metrics-by-endpoint.{url}.errors."))
        failed = sum(v for c, v in codes.items() if int(c) >= 400) + errors
        total = sum(codes.values()) + errors
        res[url] = {"count": total, "error_rate": failed / total, "p50_ms": s["median"], "p90_ms": s["p90"],
                    "p95_ms": s["p95"], "p99_ms": s["p99"], "mean_ms": s["mean"], "min_ms": s["min"], "max_ms": s["max"]}
    return res, {k: v for k, v in counters.items() if k.startswith("errors.")}
art, _ = artillery(f"{out}/artillery/report.json")
_, down_errors = artillery(f"{out}/artillery/down.json")
write(f"{out}/artillery/expected.json", {"endpoints": art, "down_errors": down_errors})

# Locust: its --json entries with Locust's own percentile function (the
# code behind its _stats.csv), and the _stats.csv of the same run, which
# Locust last writes about a second before the end (so it may miss the
# final requests: compare counts before figures).
from locust.stats import calculate_response_time_percentile
loc_json = {}
for e in json.load(open(f"{out}/locust/round-1.json")):
    hist = {int(k): v for k, v in e["response_times"].items()}
    timed = e["num_requests"] - e["num_none_requests"]
    loc_json[e["name"]] = {"count": e["num_requests"], "failures": e["num_failures"],
                           **{f"p{p}_ms": float(calculate_response_time_percentile(hist, timed, p / 100)) for p in (50, 90, 95, 99)},
                           "mean_ms": e["total_response_time"] / timed, "min_ms": e["min_response_time"], "max_ms": e["max_response_time"]}
loc = {}
for r in csv.DictReader(open(f"{out}/locust/round-1_stats.csv")):
    loc[r["Name"]] = {"count": int(r["Request Count"]), "failures": int(r["Failure Count"]),
                      "p50_ms": float(r["50%"]), "p90_ms": float(r["90%"]), "p95_ms": float(r["95%"]),
                      "p99_ms": float(r["99%"]), "mean_ms": float(r["Average Response Time"]),
                      "min_ms": float(r["Min Response Time"]), "max_ms": float(r["Max Response Time"])}
write(f"{out}/locust/expected.json", {"json": loc_json, "stats_csv": loc})

# py-spy chrometrace: replay the B/E events per thread; the time until a
# thread's next event belongs to the stack open before it.
def frame(e):
    line = e["args"].get("line")
    return f'{e["name"]} ({e["args"]["filename"]}:{line})' if line is not None else f'{e["name"]} ({e["args"]["filename"]})'
weights, open_stacks, last_ts = collections.Counter(), collections.defaultdict(list), {}
for e in json.load(open(f"{out}/pyspy/trace.json")):
    if e["ph"] not in "BE":
        continue
    tid = (e["pid"], e["tid"])
    if open_stacks[tid] and e["ts"] > last_ts[tid]:
        weights[";".join(open_stacks[tid])] += (e["ts"] - last_ts[tid]) / 1e6
    last_ts[tid] = e["ts"]
    if e["ph"] == "B":
        open_stacks[tid].append(frame(e))
    else:
        open_stacks[tid].pop()
with open(f"{out}/pyspy/expected.collapsed", "w") as f:
    for stack, w in sorted(weights.items()):
        f.write(f"{stack} {w!r}\n")

# Go: `go tool pprof -traces` (values in ms at 100 Hz: one sample per 10 ms)
stacks, current, value = collections.Counter(), [], None
for line in open(f"{out}/go/cpu.traces.txt"):
    if line.startswith("-----------+"):
        if current:
            stacks[";".join(reversed(current))] += value
        current, value = [], None
        continue
    if value is None and line[:11].strip().endswith("ms"):
        value = round(float(line[:11].strip()[:-2]) / 10)
        current.append(line[11:].strip().removesuffix(" (inline)"))
    elif value is not None and line.strip():
        current.append(line.strip().removesuffix(" (inline)"))
if current:
    stacks[";".join(reversed(current))] += value
with open(f"{out}/go/cpu.expected.collapsed", "w") as f:
    for stack, n in sorted(stacks.items()):
        f.write(f"{stack} {n}\n")

# JFR: `jfr print --json --events jdk.ExecutionSample` (frames leaf first)
stacks = collections.Counter()
for e in json.load(open(jfr_json))["recording"]["events"]:
    frames = e["values"]["stackTrace"]["frames"]
    stacks[";".join(f'{fr["method"]["type"]["name"]}.{fr["method"]["name"]}' for fr in reversed(frames))] += 1
with open(f"{out}/jfr/samples.expected.collapsed", "w") as f:
    for stack, n in sorted(stacks.items()):
        f.write(f"{stack} {n}\n")
print("expected figures written")
