//! Files perfdash does not read but can name, with what to file instead.
//!
//! A refused file should say what it looks like and what to do: "unknown
//! content" sends a user searching, "a Linux perf.data: run `perf script`
//! and file its text" does not. [`recognise`] is asked by both sniffers
//! (`ingest::raw::sniff` for round files, `profile::parse` for profiles)
//! before they give up, and first of all by the profile reader, so that a
//! load tool's HTML report is never taken for a flame graph without
//! frames. The load-test outputs perfdash does read are recognised by the
//! sniffers themselves; this table holds only the refusals.

/// What a file that perfdash does not read looks like, and what to do
/// instead; `None` when it looks like nothing known. `head` is the first
/// bytes of the content (gzip already inflated).
pub fn recognise(head: &[u8]) -> Option<&'static str> {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    if head.starts_with(b"PERFILE2") || head.starts_with(b"PERFFILE") {
        return Some(
            "a Linux perf.data recording (binary): run `perf script -i perf.data > flame.perf.txt` \
             and file that text as the profile",
        );
    }
    if head.starts_with(b"PK\x03\x04") {
        return Some(
            "a ZIP archive (a zipped report or an Excel workbook?): unzip it and file the load \
             tool's own output (JTL, k6 --out json, …) instead",
        );
    }
    if head.starts_with(b"%PDF") {
        return Some(
            "a PDF document: file the load tool's own output (JTL, k6 --out json, …) instead",
        );
    }
    let text = String::from_utf8_lossy(&head[..head.len().min(256 * 1024)]).to_ascii_lowercase();
    let trimmed = text.trim_start();
    let first_line = trimmed.lines().next().unwrap_or("");
    if trimmed.starts_with('<') {
        return html(trimmed);
    }
    if first_line.starts_with("this is apachebench") || text.contains("\ncomplete requests:") {
        return Some(
            "ab's text report: run ab with -g FILE (one row per request, recomputed with the \
             warm-up trimmed) or -e FILE (its percentiles) and file that",
        );
    }
    if text.contains("\nsummary:\n")
        && text.contains("requests/sec:")
        && text.contains("latency distribution:")
    {
        return Some("hey's text report: run hey with -o csv and file that (one row per request)");
    }
    if text.contains("thread stats") && text.contains("requests/sec:") {
        return Some(
            "wrk's text report: it holds no per-request times or p99 perfdash can check; record the \
             test with k6, hey (-o csv) or ab (-g) instead",
        );
    }
    if text.contains("http_req_duration") && text.contains("avg=") && text.contains("p(9") {
        return Some(
            "k6's end-of-test text summary: file the machine-readable data instead (k6 run \
             --summary-export FILE, handleSummary() JSON, or --out json)",
        );
    }
    None
}

/// A load-test result in a profile's place, from its first line: the
/// profile reader must never take one for folded stacks (ab's `-g` rows
/// end in a number, as folded lines do).
pub fn load_test_result(first_line: &str) -> Option<&'static str> {
    let line = first_line.trim_start_matches('\u{feff}').trim_end();
    let what = if line.starts_with("starttime\tseconds\tctime") {
        "ab's -g output"
    } else if line.starts_with("Percentage served,Time in ms") {
        "ab's -e output"
    } else if line.starts_with("response-time,DNS+dialup") {
        "hey's CSV"
    } else if line.starts_with("metric_name,timestamp,metric_value") {
        "k6's CSV output"
    } else if line.starts_with("timeStamp,elapsed,") || line.starts_with("timeStamp\telapsed\t") {
        "a JMeter JTL"
    } else if line.starts_with("Type,Name,Request Count") || line.starts_with("\"Type\",\"Name\"") {
        "Locust's _stats.csv"
    } else {
        return None;
    };
    Some(what)
}

/// HTML and XML that is not a flame graph.
fn html(lower: &str) -> Option<&'static str> {
    let has = |s: &str| lower.contains(s);
    if has("<jmetertestplan") {
        return Some(
            "a JMeter test plan, not results: run it with `jmeter -n -t plan.jmx -l round-1.jtl` and file the JTL",
        );
    }
    if has("locust test report") || (has("<title>locust</title>") && has("templateargs")) {
        return Some(
            "a Locust HTML report: file Locust's --csv output (round-<n>_stats.csv) or --json \
             output instead",
        );
    }
    if has("xk6-dashboard")
        || has("k6 web dashboard")
        || (has("k6") && has("dashboard") && has("report"))
    {
        return Some(
            "a k6 web-dashboard report: file the --out json output (recomputed with the warm-up \
             trimmed) or the summary (--summary-export, handleSummary()) instead",
        );
    }
    if has("apache jmeter dashboard") {
        return Some(
            "JMeter's HTML dashboard page: file the JTL it was made from, or its statistics.json",
        );
    }
    if has("gatling") && (has("gatling.io") || has("global information")) {
        return Some("a Gatling HTML report: file its simulation.log instead");
    }
    if has("artillery") && has("report") {
        return Some(
            "an Artillery HTML report: file the JSON report (artillery run --output report.json) instead",
        );
    }
    if has("k6") && (has("load test") || has("k6-reporter") || has("summary")) {
        return Some(
            "a k6 HTML report: file the --out json output or the summary (--summary-export, \
             handleSummary() JSON) instead",
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::recognise;

    #[test]
    fn names_what_a_refused_file_is_and_what_to_do() {
        let cases: [(&[u8], &str); 7] = [
            (b"PERFILE2\x68\0\0\0\0\0\0\0", "perf script"),
            (
                b"<!DOCTYPE html><html><head><title>Locust</title><script>window.templateArgs = {}",
                "Locust HTML report",
            ),
            (
                b"<!DOCTYPE html><html><title>Test Report</title><h1>Locust Test Report</h1>",
                "--csv",
            ),
            (
                b"<html><head><title>k6 report</title></head><body>xk6-dashboard",
                "k6 web-dashboard report",
            ),
            (
                b"This is ApacheBench, Version 2.3 <$Revision: 1913912 $>\n",
                "-g FILE",
            ),
            (
                b"\nSummary:\n  Total:\t4.0 secs\n  Requests/sec:\t39\n\nLatency distribution:\n",
                "-o csv",
            ),
            (
                b"<?xml version=\"1.0\"?>\n<jmeterTestPlan version=\"1.2\">",
                "-l round-1.jtl",
            ),
        ];
        for (head, advice) in cases {
            let said =
                recognise(head).unwrap_or_else(|| panic!("{:?}", String::from_utf8_lossy(head)));
            assert!(said.contains(advice), "{said}");
        }
        assert_eq!(recognise(b"a;b;c 12\n"), None);
        assert_eq!(
            recognise(b"<!DOCTYPE html><html><script>function f(level,left"),
            None
        );
    }
}
