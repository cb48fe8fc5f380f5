//! Profile parsing against the real third-party fixtures in
//! `../shared/fixtures` (skipped when that folder is absent) and small inline
//! cases.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::config::ProfileSettings;

fn fixtures() -> Option<PathBuf> {
    crate::shared_fixtures::dir()
}

fn read(dir: &Path, rel: &str) -> Vec<u8> {
    std::fs::read(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn parse_fixture(dir: &Path, rel: &str) -> Profile {
    parse(&read(dir, rel), Path::new(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The stacks as owned strings, to compare with expected maps.
fn owned(stacks: &BTreeMap<Stack, f64>) -> BTreeMap<String, f64> {
    stacks.iter().map(|(s, w)| (s.to_string(), *w)).collect()
}

fn folded_map(text: &str) -> BTreeMap<String, f64> {
    owned(
        &parse_folded(text, Path::new("expected"), "cpu")
            .unwrap()
            .stacks,
    )
}

// ---------- async-profiler HTML ----------

#[test]
fn html_v3_demo_keeps_the_pages_own_total() {
    let Some(dir) = fixtures() else { return };
    let p = parse_fixture(&dir, "async-profiler@v3.0/demo/flamegraph.html");
    assert_eq!(p.format, ProfileFormat::AsyncProfilerHtmlV3);
    // The page says 584 samples (`n(3,584)`, the `all` frame); the stacks sum
    // to 583 because one sample has an empty stack: the root's own width.
    assert_eq!(p.total, 584.0);
    assert_eq!(p.stacks_total(), 583.0);
    assert_eq!(p.root_self, 1.0);
    // Prefix-compressed names are expanded: `'!ompilation::Compilation'` after
    // ` C2Compiler::compile_method` shares 1 character.
    assert!(
        p.stacks
            .keys()
            .any(|s| s.contains("Compilation::Compilation"))
    );
    assert!(
        p.stacks.keys().any(|s| s.ends_with("vfs_read_[k]")),
        "kernel frames get _[k]"
    );
}

#[test]
fn html_v4_template_gives_the_same_profile_as_v3() {
    let Some(dir) = fixtures() else { return };
    let v3 = parse_fixture(&dir, "async-profiler@v3.0/demo/flamegraph.html");
    let v4 = parse_fixture(&dir, "async-profiler/.assets/html/flamegraph.html");
    assert_eq!(v4.format, ProfileFormat::AsyncProfilerHtmlV3);
    assert_eq!(v4.units, "samples");
    assert_eq!(v4.total, 584.0);
    assert_eq!(v4.stacks, v3.stacks);
}

#[test]
fn html_v2_legacy_template() {
    let Some(dir) = fixtures() else { return };
    let p = parse_fixture(&dir, "async-profiler@v2.9/demo/flamegraph.html");
    assert_eq!(p.format, ProfileFormat::AsyncProfilerHtmlV2);
    // `f(0,0,641,4,'all')`: the page's total.
    assert_eq!(p.total, 641.0);
    assert_eq!(p.stacks_total() + p.root_self, 641.0);
    // Type 2 is kernel in the 5-colour palette.
    assert!(p.stacks.contains_key(
        "com/sun/glass/ui/InvokeLaterDispatcher.run;com/sun/glass/ui/gtk/GtkApplication.submitForLaterInvocation;\
         com/sun/glass/ui/gtk/GtkApplication._submitForLaterInvocation;\
         Java_com_sun_glass_ui_gtk_GtkApplication__1submitForLaterInvocation;__write;\
         entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k];__x64_sys_write_[k];ksys_write_[k];\
         vfs_write_[k];__vfs_write_[k];eventfd_write_[k]"
    ));
}

#[test]
fn html_self_weights_from_widths() {
    // Hand-written v2.8-style page with the 7-entry palette and an escaped title.
    let page = "<!DOCTYPE html><html><script>\nconst palette = [\n[0x1, 1],[0x2, 1],[0x3, 1],[0x4, 1],[0x5, 1],[0x6, 1],[0x7, 1],\n];\n\
                function f(level, left, width, type, title, inln, c1, int) {}\n\
                f(0,0,10,3,'all')\nf(1,0,6,1,'a')\nf(2,0,2,1,'b\\'s',0,1,0)\nf(2,2,3,5,'k')\nf(1,6,3,1,'c')\n</script></html>";
    let p = parse(page.as_bytes(), Path::new("flame.lock.html")).unwrap();
    assert_eq!(p.format, ProfileFormat::AsyncProfilerHtmlV28);
    assert_eq!(p.kind, "lock");
    let expected: BTreeMap<String, f64> =
        [("a", 1.0), ("a;b's", 2.0), ("a;k_[k]", 3.0), ("c", 3.0)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
    assert_eq!(owned(&p.stacks), expected);
    assert_eq!(p.root_self, 1.0);
    assert_eq!(p.total, 10.0);
}

#[test]
fn folded_stacks_starting_like_markup_or_json_are_folded() {
    // py-spy's root frame for a script is `<module>`; Rust closures are `{{closure}}`.
    let pyspy = b"<module> (app.py:10);main (app.py:5);work (app.py:2) 7\n<module> (app.py:10) 1\n";
    let p = parse(pyspy, Path::new("flame.txt")).unwrap();
    assert_eq!(p.format, ProfileFormat::Folded);
    assert_eq!(p.total, 8.0);
    let rust = b"{{closure}};main 3\n";
    let p = parse(rust, Path::new("flame.txt")).unwrap();
    assert_eq!(p.format, ProfileFormat::Folded);
    assert_eq!(p.stacks.get("{{closure}};main"), Some(&3.0));
}

#[test]
fn html_without_flame_graph_is_an_error() {
    let err = parse(
        b"<html><body>hello</body></html>",
        Path::new("r/e/flame.html"),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("not an async-profiler flame graph"),
        "{err}"
    );
}

// ---------- folded ----------

/// Frames as inferno lays them out: sort the lines, merge common prefixes.
/// (depth, start, width, name) with depth 0 = `all`.
fn inferno_layout(lines: &[String]) -> Vec<(usize, u64, u64, String)> {
    let mut sorted: Vec<&String> = lines.iter().collect();
    sorted.sort();
    let mut frames = Vec::new();
    let mut open: Vec<(String, u64)> = Vec::new(); // (name, start)
    let mut time = 0u64;
    for line in sorted {
        let parsed = folded::parse_line(line).unwrap();
        let names: Vec<&str> = parsed.stack.split(';').collect();
        let common = open
            .iter()
            .zip(&names)
            .take_while(|((o, _), n)| o == *n)
            .count();
        while open.len() > common {
            let (name, start) = open.pop().unwrap();
            frames.push((open.len() + 1, start, time - start, name));
        }
        for n in &names[common..] {
            open.push((n.to_string(), time));
        }
        time += parsed.count as u64;
    }
    while let Some((name, start)) = open.pop() {
        frames.push((open.len() + 1, start, time - start, name));
    }
    frames.push((0, 0, time, "all".to_string()));
    frames
}

/// (depth, fg:x, fg:w, name) of every frame in an inferno SVG, and its total.
fn svg_frames(svg: &str) -> (u64, Vec<(usize, u64, u64, String)>) {
    let attr = |s: &str, name: &str| -> Option<String> {
        let at = s.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(s[at..at + s[at..].find('"')?].to_string())
    };
    let total: u64 = attr(svg, "total_samples").unwrap().parse().unwrap();
    let mut raw = Vec::new();
    for g in svg.split("<g>").skip(1) {
        let title = &g[g.find("<title>").unwrap() + 7..g.find("</title>").unwrap()];
        let name = unescape(&title[..title.rfind(" (").unwrap()]);
        let rect = &g[g.find("<rect").unwrap()..];
        let y: f64 = attr(rect, "y").unwrap().parse().unwrap();
        let x: u64 = attr(rect, "fg:x").unwrap().parse().unwrap();
        let w: u64 = attr(rect, "fg:w").unwrap().parse().unwrap();
        raw.push((y, x, w, name));
    }
    let mut ys: Vec<f64> = raw.iter().map(|r| r.0).collect();
    ys.sort_by(|a, b| b.total_cmp(a));
    ys.dedup();
    let frames = raw
        .into_iter()
        .map(|(y, x, w, n)| (ys.iter().position(|v| *v == y).unwrap(), x, w, n))
        .collect();
    (total, frames)
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

fn lines_of(p: &Profile) -> Vec<String> {
    p.stacks.iter().map(|(s, w)| format!("{s} {w}")).collect()
}

/// Our parse, laid out like inferno, must reproduce every frame of inferno's
/// expected SVG (same depth, position, width and name), and every frame
/// inferno keeps (≥ 0.1% wide) must be there.
fn assert_agrees_with_inferno_svg(lines: &[String], svg_rel: &str, dir: &Path) {
    let svg = String::from_utf8(read(dir, svg_rel)).unwrap();
    let (total, expected) = svg_frames(&svg);
    // inferno draws frame names without their `_[k]`/`_[j]` annotation.
    let ours: Vec<_> = inferno_layout(lines)
        .into_iter()
        .map(|(d, x, w, n)| (d, x, w, classify::strip_annotation(&n).to_string()))
        .collect();
    let ours_total = ours.iter().find(|f| f.0 == 0).unwrap().2;
    assert_eq!(ours_total, total, "{svg_rel}: total samples");
    for frame in &expected {
        assert!(
            ours.contains(frame),
            "{svg_rel}: frame {frame:?} missing from our parse"
        );
    }
    for frame in ours.iter().filter(|f| f.2 * 1000 >= total) {
        assert!(
            expected.contains(frame),
            "{svg_rel}: our frame {frame:?} not in inferno's SVG"
        );
    }
}

#[test]
fn folded_agrees_with_inferno_expected_svgs() {
    let Some(dir) = fixtures() else { return };
    for (input, svg) in [
        (
            "inferno/tests/data/flamegraph/austin/flames.txt",
            "inferno/tests/data/flamegraph/austin/flame.svg",
        ),
        (
            "inferno/tests/data/flamegraph/colors/async-profiler-collapsed-part.txt",
            "inferno/tests/data/flamegraph/colors/async-profiler-java.svg",
        ),
        (
            "inferno/tests/data/flamegraph/unsorted-input/perf-vertx-stacks-01-collapsed-all-unsorted.txt",
            "inferno/tests/data/flamegraph/perf-vertx-stacks/perf-vertx-stacks-01-collapsed-all.svg",
        ),
    ] {
        let p = parse_fixture(&dir, input);
        assert_eq!(p.format, ProfileFormat::Folded, "{input}");
        assert_eq!(p.skipped, 0, "{input}: {:?}", p.warnings);
        assert_agrees_with_inferno_svg(&lines_of(&p), svg, &dir);
    }
}

#[test]
fn differential_folded_takes_the_after_count_like_inferno() {
    let Some(dir) = fixtures() else { return };
    let rel = "inferno/tests/data/flamegraph/differential/perf-cycles-instructions-01-collapsed-all-diff.txt";
    let p = parse_fixture(&dir, rel);
    assert!(
        p.warnings.iter().any(|w| w.contains("differential")),
        "{:?}",
        p.warnings
    );
    assert_eq!(p.stacks.get("cksum;cksum"), Some(&2.0));
    assert_agrees_with_inferno_svg(
        &lines_of(&p),
        "inferno/tests/data/flamegraph/differential/diff.svg",
        &dir,
    );
}

#[test]
fn folded_edge_cases_from_inferno() {
    let Some(dir) = fixtures() else { return };
    let base = "inferno/tests/data/flamegraph/";
    let fractional = parse_fixture(&dir, &format!("{base}fractional-samples/fractional.txt"));
    assert_eq!(fractional.stacks.get("noploop;main"), Some(&274.321));
    assert!((fractional.total - (31.23 + 6.1 + 1.4 + 19.0 + 2.567 + 274.321)).abs() < 1e-9);
    assert!(fractional.has_fractional_weights());

    let zero = parse_fixture(
        &dir,
        &format!("{base}fractional-samples/zero-fractionals.txt"),
    );
    assert_eq!(zero.stacks.get("cksum;cksum"), Some(&6.0)); // `6.` is a count
    assert_eq!(zero.total, 31.0 + 6.0 + 1.0 + 19.0 + 2.0 + 274.0);

    let spaces = parse_fixture(&dir, &format!("{base}fractional-samples/with-space.txt"));
    assert!(spaces.stacks.contains_key(
        "cksum;main;core::array::<impl core::default::Default for [T; _]>::default::h67c9877e6f2a615c"
    ));

    let tricky = parse_fixture(&dir, &format!("{base}fractional-samples/tricky-stack.txt"));
    assert_eq!(
        tricky.stacks.get("rustc;<alloc::vec::Vec<T> as alloc::vec::SpecExtend<T, I>>::from_iter;memcpy@GLIBC_2.2.5"),
        Some(&3.0)
    );

    let bad = parse_fixture(&dir, &format!("{base}bad-lines/bad-lines.txt"));
    assert_eq!(bad.skipped, 2);
    assert!(bad.warnings[0].starts_with("line 3:"), "{:?}", bad.warnings);
    // `noploop;main 274` occurs twice (after a blank line): duplicates are summed.
    assert_eq!(bad.total, 31.0 + 6.0 + 1.0 + 19.0 + 2.0 + 274.0 + 274.0);
    assert_eq!(bad.stacks.get("noploop;main"), Some(&548.0));

    let empty = parse_fixture(&dir, &format!("{base}empty/empty.txt"));
    assert_eq!(empty.total, 0.0);
    assert!(empty.stacks.is_empty());
}

#[test]
fn speedscope_stackcollapse_encodings_all_read_the_same() {
    let Some(dir) = fixtures() else { return };
    let base = "speedscope/sample/profiles/stackcollapse/";
    let plain = parse_fixture(&dir, &format!("{base}simple.txt"));
    let expected: BTreeMap<String, f64> = [("a;b;c", 5.0), ("a;b;d", 4.0), ("a;b", 5.0)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(owned(&plain.stacks), expected);
    for name in [
        "simple-crlf.txt",
        "simple-utf16-le.txt",
        "simple-utf16-be.txt",
        "simple-with-invalids.txt",
    ] {
        let p = parse_fixture(&dir, &format!("{base}{name}"));
        assert_eq!(owned(&p.stacks), expected, "{name}");
    }
    let invalids = parse_fixture(&dir, &format!("{base}simple-with-invalids.txt"));
    assert_eq!(
        invalids.skipped, 1,
        "comments are not counted, `invalid line` is"
    );
    assert!(
        invalids.warnings.iter().any(|w| w.starts_with("line 8:")),
        "{:?}",
        invalids.warnings
    );
    let recursion = parse_fixture(&dir, &format!("{base}recursion.txt"));
    assert_eq!(recursion.total, 10.0);
}

#[test]
fn collapse_recursive_and_dtrace_inputs() {
    let Some(dir) = fixtures() else { return };
    let basic = parse_fixture(&dir, "inferno/tests/data/collapse-recursive/basic.txt");
    assert_eq!(basic.format, ProfileFormat::Folded);
    assert!(basic.total > 0.0);
    for (input, expected) in [
        (
            "inferno/tests/data/collapse-dtrace/java.txt",
            "inferno/tests/data/collapse-dtrace/results/java.txt",
        ),
        (
            "inferno/tests/data/collapse-dtrace/rust-names.txt",
            "inferno/tests/data/collapse-dtrace/results/rust-names.txt",
        ),
    ] {
        let p = parse_fixture(&dir, input);
        assert_eq!(p.format, ProfileFormat::Dtrace, "{input}");
        let want = folded_map(&String::from_utf8(read(&dir, expected)).unwrap());
        assert_eq!(owned(&p.stacks), want, "{input}");
    }
}

#[test]
fn async_profiler_collapsed_files() {
    let Some(dir) = fixtures() else { return };
    for rel in [
        "async-profiler/test/test/jfrconverter/sample1.collapsed",
        "async-profiler/test/test/jfrconverter/sample2.collapsed",
    ] {
        let p = parse_fixture(&dir, rel);
        assert_eq!(p.format, ProfileFormat::Folded);
        assert_eq!(p.skipped, 0, "{rel}");
        assert!(p.total > 0.0);
    }
}

// ---------- speedscope ----------

#[test]
fn speedscope_sampled_evented_and_multi_profile() {
    let Some(dir) = fixtures() else { return };
    let base = "speedscope/sample/profiles/speedscope/";
    let sampled = parse_fixture(&dir, &format!("{base}0.1.2/simple-sampled.speedscope.json"));
    assert_eq!(sampled.format, ProfileFormat::Speedscope);
    assert_eq!(sampled.units, "seconds");
    let expected: BTreeMap<String, f64> = [("a;b;c", 5.0), ("a;b;d", 4.0), ("a;b", 5.0)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(owned(&sampled.stacks), expected);
    assert_eq!(sampled.total, 14.0);

    let two = parse_fixture(&dir, &format!("{base}0.6.0/two-sampled.speedscope.json"));
    assert_eq!(two.total, 28.0, "both profiles are summed");

    let evented = parse_fixture(&dir, &format!("{base}0.0.1/simple.speedscope.json"));
    assert_eq!(evented.total, 14.0, "endValue 14: time on top of the stack");
    assert!(
        evented.stacks.keys().all(|s| s.starts_with('a')),
        "{:?}",
        evented.stacks
    );
    // Unitless events measure time, not samples: the report must not call
    // 14 of them "14 samples" and then say the count is unknown.
    assert_eq!(evented.units, "units");
    assert_eq!(evented.samples, None);
    let rel = format!("{base}0.0.1/simple.speedscope.json");
    let report = inspect_profile(&read(&dir, &rel), Path::new(&rel), &Default::default())
        .unwrap()
        .to_table();
    assert!(
        report.contains("total 14 units (no sample count in this format), 3 stacks"),
        "{report}"
    );
}

/// One sample is "1 sample" (speedscope's `one-sample.linux-perf.txt`,
/// weighted by its period).
#[test]
fn a_single_sample_is_singular() {
    let Some(dir) = fixtures() else { return };
    let rel = "speedscope/sample/profiles/linux-perf/one-sample.linux-perf.txt";
    let report = inspect_profile(&read(&dir, rel), Path::new(rel), &Default::default())
        .unwrap()
        .to_table();
    assert!(report.contains(" in 1 sample, 1 stack\n"), "{report}");
}

// ---------- perf script ----------

fn assert_same_stacks(got: &BTreeMap<String, f64>, want: &BTreeMap<String, f64>, what: &str) {
    let missing: Vec<_> = want
        .iter()
        .filter(|(k, v)| got.get(*k) != Some(v))
        .take(3)
        .collect();
    let extra: Vec<_> = got
        .iter()
        .filter(|(k, v)| want.get(*k) != Some(v))
        .take(3)
        .collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{what}: {} expected stacks differ, e.g. {missing:?}; ours instead: {extra:?}",
        want.iter().filter(|(k, v)| got.get(*k) != Some(v)).count()
    );
}

fn collapsed_map(dir: &Path, input: &str, options: PerfOptions) -> BTreeMap<String, f64> {
    let text = String::from_utf8_lossy(&read(dir, input)).into_owned();
    folded_map(&collapse_perf(&text, options).unwrap())
}

#[test]
fn perf_collapse_agrees_with_inferno_expected_outputs() {
    let Some(dir) = fixtures() else { return };
    let base = "inferno/tests/data/collapse-perf/";
    let jit = PerfOptions {
        annotate_jit: true,
        ..PerfOptions::PLAIN
    };
    let kernel = PerfOptions {
        annotate_kernel: true,
        ..PerfOptions::PLAIN
    };
    for (input, expected, options) in [
        (
            "java-inline.txt",
            "results/java-inline-collapsed.txt",
            PerfOptions::PLAIN,
        ),
        (
            "go-stacks.txt",
            "results/go-stacks-collapsed.txt",
            PerfOptions::PLAIN,
        ),
        (
            "cpp-stacks-std-function.txt",
            "results/cpp-stacks-std-function-collapsed.txt",
            PerfOptions::PLAIN,
        ),
        (
            "single-event.txt",
            "results/single-event-collapsed.txt",
            PerfOptions::PLAIN,
        ),
        (
            "single-line-stacks.txt",
            "results/single-line-stacks-collapsed.txt",
            PerfOptions::PLAIN,
        ),
        (
            "sourcepawn-jitdump.txt",
            "results/sourcepawn-jitdump-collapsed-jit.txt",
            jit,
        ),
        (
            "versioned-vmlinux.txt",
            "results/versioned-vmlinux-collapsed-kernel.txt",
            kernel,
        ),
    ] {
        let want =
            folded_map(&String::from_utf8(read(&dir, &format!("{base}{expected}"))).unwrap());
        assert!(!want.is_empty(), "{expected}");
        assert_eq!(
            collapsed_map(&dir, &format!("{base}{input}"), options),
            want,
            "{input}"
        );
    }
    // Malformed inputs are read without failing (inferno warns and skips).
    for input in ["weird-stack-line.txt", "empty-line.txt"] {
        let p = parse_fixture(&dir, &format!("{base}{input}"));
        assert_eq!(p.format, ProfileFormat::PerfScript, "{input}");
    }
}

#[test]
fn perf_collapse_agrees_with_flamegraph_expected_outputs() {
    let Some(dir) = fixtures() else { return };
    let all = PerfOptions::INGEST;
    let with = |f: fn(&mut PerfOptions)| {
        let mut o = PerfOptions::PLAIN;
        f(&mut o);
        o
    };
    // Each case may name one known difference between inferno's port and
    // stackcollapse-perf.pl, as a predicate on the differing stack; at most
    // one stack per side may differ that way, everything else must agree.
    // The `-collapsed-pid`/`-collapsed-tid` files of perf-java-stacks-01 were
    // written by an older stackcollapse-perf.pl (no Java name tidying: `Lio/netty/…`,
    // `java-?`), so their options do not match any current collapse and they are left out.
    let vdso = |s: &str| s.contains("[[vdso]]");
    type KnownDifference = fn(&str) -> bool;
    let cases: Vec<(&str, &str, PerfOptions, KnownDifference)> = vec![
        // One `ab` sample ends in `[unknown] ([vdso])` then a 13-digit address:
        // the Perl script drops it, inferno keeps it.
        (
            "perf-java-stacks-01.txt",
            "perf-java-stacks-01-collapsed-all.txt",
            all,
            vdso,
        ),
        (
            "perf-java-stacks-01.txt",
            "perf-java-stacks-01-collapsed-jit.txt",
            with(|o| o.annotate_jit = true),
            vdso,
        ),
        (
            "perf-java-stacks-01.txt",
            "perf-java-stacks-01-collapsed-kernel.txt",
            with(|o| o.annotate_kernel = true),
            vdso,
        ),
        (
            "perf-java-stacks-01.txt",
            "perf-java-stacks-01-collapsed-addrs.txt",
            with(|o| o.include_addrs = true),
            |s| s.contains("[vdso]"),
        ),
        (
            "perf-java-faults-01.txt",
            "perf-java-faults-01-collapsed-all.txt",
            all,
            |_| false,
        ),
        // The Perl script removes quotes from `RegExp:[&<>\"\']`; inferno keeps them.
        (
            "perf-js-stacks-01.txt",
            "perf-js-stacks-01-collapsed-all.txt",
            all,
            |s| s.contains("RegExp:[&<>"),
        ),
        (
            "perf-cycles-instructions-01.txt",
            "perf-cycles-instructions-01-collapsed-all.txt",
            all,
            |_| false,
        ),
        // The last sample is not followed by a blank line: the Perl script drops it (both files).
        (
            "perf-dd-stacks-01.txt",
            "perf-dd-stacks-01-collapsed-all.txt",
            all,
            |s| s == "dd;[unknown];system_call_[k]",
        ),
        (
            "perf-iperf-stacks-pidtid-01.txt",
            "perf-iperf-stacks-pidtid-01-collapsed-tid.txt",
            with(|o| o.include_tid = true),
            |s| s == "iperf-27409/28744;[unknown];[unknown];[iperf]",
        ),
    ];
    for (input, expected, options, known) in cases {
        let mut want = folded_map(
            &String::from_utf8(read(&dir, &format!("FlameGraph/test/results/{expected}"))).unwrap(),
        );
        let mut got = collapsed_map(&dir, &format!("FlameGraph/test/{input}"), options);
        assert!(want.len() > 1, "{expected}");
        let (want_before, got_before) = (want.len(), got.len());
        want.retain(|s, _| !known(s));
        got.retain(|s, _| !known(s));
        assert!(
            want_before - want.len() <= 1 && got_before - got.len() <= 1,
            "{expected}: known difference too wide"
        );
        assert_same_stacks(&got, &want, expected);
    }
}

#[test]
fn gzipped_perf_script_matches_flamegraph_total() {
    let Some(dir) = fixtures() else { return };
    let p = parse_fixture(&dir, "FlameGraph/example-perf-stacks.txt.gz");
    assert_eq!(p.format, ProfileFormat::PerfScript);
    // example-perf.svg (flamegraph.pl on the same input): `all (1,315 samples, 100%)`.
    assert_eq!(p.total, 1315.0);
}

#[test]
fn speedscope_perf_variants_are_perf_script() {
    let Some(dir) = fixtures() else { return };
    for name in [
        "simple-with-header.linux-perf.txt",
        "simple-with-pid.linux-perf.txt",
        "one-sample.linux-perf.txt",
    ] {
        let p = parse_fixture(
            &dir,
            &format!("speedscope/sample/profiles/linux-perf/{name}"),
        );
        assert_eq!(p.format, ProfileFormat::PerfScript, "{name}");
        assert!(p.total > 0.0, "{name}");
    }
}

#[test]
fn svg_flame_graphs_are_refused_with_advice() {
    let Some(dir) = fixtures() else { return };
    let err = parse(
        &read(&dir, "FlameGraph/demos/cpu-mixedmode-flamegraph-java.svg"),
        Path::new("x/flame.svg"),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("archive the folded stacks"),
        "{err}"
    );
}

// ---------- classification on fixtures ----------

fn shares(p: &Profile) -> CategoryShares {
    Classifier::new(&ProfileSettings::default())
        .unwrap()
        .shares(p)
}

#[test]
fn async_profiler_demo_is_one_fifth_serial_gc() {
    let Some(dir) = fixtures() else { return };
    let p = parse_fixture(&dir, "async-profiler@v3.0/demo/flamegraph.html");
    let s = shares(&p);
    // FORMATS.md §6 prototype: GC 18.5% (Serial DefNew), JIT 12%.
    assert!((s.pct(Category::Gc) - 18.5).abs() < 0.5, "{s:?}");
    assert!((s.pct(Category::Jit) - 12.0).abs() < 0.5, "{s:?}");
    let sum: f64 = s.shares.iter().map(|(_, v)| v).sum();
    assert!((sum - 100.0).abs() < 1e-9);
}

#[test]
fn sample1_collapsed_is_mostly_socket_io() {
    let Some(dir) = fixtures() else { return };
    let p = parse_fixture(
        &dir,
        "async-profiler/test/test/jfrconverter/sample1.collapsed",
    );
    let s = shares(&p);
    assert!((s.pct(Category::Io) - 77.0).abs() < 1.5, "{s:?}");
}

#[test]
fn async_profiler_collapsed_part_is_a_quarter_gc() {
    let Some(dir) = fixtures() else { return };
    let p = parse_fixture(
        &dir,
        "inferno/tests/data/flamegraph/colors/async-profiler-collapsed-part.txt",
    );
    let s = shares(&p);
    // 793 of its 3,279 samples run in GC threads (`GangWorker::loop`, `VM_…`, G1 closures),
    // the rest in Java threads; it has no compiler threads.
    assert!(
        (s.pct(Category::Gc) - 100.0 * 793.0 / 3279.0).abs() < 1e-9,
        "{s:?}"
    );
    assert_eq!(s.pct(Category::Jit), 0.0);
    assert!(
        (s.pct(Category::Application) + s.pct(Category::Gc) - 100.0).abs() < 1e-9,
        "{s:?}"
    );
}

#[test]
fn perf_dd_is_io() {
    let Some(dir) = fixtures() else { return };
    let p = parse_fixture(&dir, "FlameGraph/test/perf-dd-stacks-01.txt");
    let s = shares(&p);
    assert!(s.pct(Category::Io) > 50.0, "{s:?}");
}

// ---------- kinds ----------

#[test]
fn kinds_come_from_file_names() {
    assert_eq!(kind_from_file_name("flame.html").as_deref(), Some("cpu"));
    assert_eq!(
        kind_from_file_name("flame.collapsed").as_deref(),
        Some("cpu")
    );
    assert_eq!(
        kind_from_file_name("flame.alloc.html").as_deref(),
        Some("alloc")
    );
    assert_eq!(
        kind_from_file_name("flame.wall.speedscope.json").as_deref(),
        Some("wall")
    );
    assert_eq!(kind_from_file_name("flame").as_deref(), Some("cpu"));
    assert_eq!(
        kind_from_file_name("flame.collapsed.txt").as_deref(),
        Some("cpu")
    );
    assert_eq!(
        kind_from_file_name("flame.speedscope.json").as_deref(),
        Some("cpu")
    );
    assert_eq!(
        kind_from_file_name("flame.lock.collapsed.gz").as_deref(),
        Some("lock")
    );
    assert_eq!(
        kind_from_file_name("flamegraph.html").as_deref(),
        Some("cpu")
    );
    assert_eq!(
        kind_from_file_name("flamegraph.lock.html").as_deref(),
        Some("lock")
    );
    // Any name under `flame*` is a profile; the content decides its format.
    let kind = |n: &str| kind_from_file_name(n);
    assert_eq!(kind("flames.txt").as_deref(), Some("cpu"));
    assert_eq!(kind("flamegraph-lock.txt").as_deref(), Some("lock"));
    assert_eq!(kind("flame_alloc.html").as_deref(), Some("alloc"));
    assert_eq!(kind("Flame.Alloc.html").as_deref(), Some("alloc"));
    assert_eq!(kind("flame_2026-11-27.txt").as_deref(), Some("cpu"));
    assert_eq!(kind("flamegraph_v1.json").as_deref(), Some("cpu"));
    assert_eq!(kind("flame.v1.json").as_deref(), Some("v1"));
    assert_eq!(kind("flame-pyspy.folded").as_deref(), Some("cpu"));
    assert_eq!(kind("flame.Bad Kind.txt").as_deref(), Some("cpu"));
    assert_eq!(kind("round-1.json"), None);
    assert_eq!(kind("prof1.txt"), None);
}

// ---------- detection by content ----------

#[test]
fn profiles_are_told_by_content_whatever_their_name() {
    let shop = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/pyspy-shop"
    ));
    let head = |bytes: &[u8]| bytes[..bytes.len().min(64 * 1024)].to_vec();
    let sniffed = |path: PathBuf| sniff(&head(&std::fs::read(&path).unwrap()));
    assert_eq!(sniffed(shop.join("v1.folded")), Some(Likeness::Plausible));
    assert_eq!(
        sniffed(shop.join("v2.speedscope.json")),
        Some(Likeness::Certain)
    );
    assert_eq!(
        sniff(b"a;b 3\nmain 4\n# comment\n"),
        Some(Likeness::Plausible)
    );
    assert_eq!(
        sniff(b"<module> (app.py:1);main (app.py:3) 5\n"),
        Some(Likeness::Plausible)
    );
    // Not profiles: result files and prose.
    assert_eq!(sniff(b"{\"metrics\":{}}"), None);
    assert_eq!(sniff(b"timeStamp,elapsed,label\n1,2,x\n"), None);
    assert_eq!(
        sniff(b"<?xml version=\"1.0\"?>\n<testResults version=\"1.2\">"),
        None
    );
    assert_eq!(sniff(b"hello world\nthis is text\n"), None);
    assert_eq!(sniff(b""), None);
    let Some(dir) = fixtures() else { return };
    for rel in [
        "async-profiler@v3.0/demo/flamegraph.html",
        "async-profiler@v2.9/demo/flamegraph.html",
        "speedscope/sample/profiles/speedscope/0.1.2/simple-sampled.speedscope.json",
    ] {
        assert_eq!(
            sniff(&head(&read(&dir, rel))),
            Some(Likeness::Certain),
            "{rel}"
        );
    }
    for rel in [
        "FlameGraph/test/perf-java-stacks-01.txt",
        "inferno/tests/data/collapse-dtrace/java.txt",
    ] {
        if dir.join(rel).exists() {
            assert_eq!(
                sniff(&head(&read(&dir, rel))),
                Some(Likeness::Plausible),
                "{rel}"
            );
        }
    }
}

// ---------- a real profile of a real service ----------

/// Two py-spy profiles of `tests/fixtures/pyspy/orders_service.py` under the
/// same bounded load (`record.sh`): normal, and with `slow_scan` injected into
/// the request handler (throughput fell from 5,900 to 1,677 requests in 12 s).
fn pyspy(name: &str) -> Profile {
    let path =
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pyspy")).join(name);
    parse(&std::fs::read(&path).unwrap(), &path).unwrap()
}

fn service_classifier() -> Classifier {
    Classifier::new(&ProfileSettings {
        application_prefixes: vec!["orders_service.".to_string()],
        ..ProfileSettings::default()
    })
    .unwrap()
}

/// Attribution and grown frames of `current` against `baseline`, as the
/// analysis computes them.
fn attribute_pair(
    c: &Classifier,
    baseline: &Profile,
    current: &Profile,
) -> (crate::analyse::attribution::Attribution, Vec<FrameGrowth>) {
    use crate::analyse::attribution::Capture;
    attribute_pair_with(
        c,
        (baseline, Capture::default()),
        (current, Capture::default()),
    )
}

/// [`attribute_pair`] with what the runs say about each capture.
fn attribute_pair_with(
    c: &Classifier,
    (baseline, base_capture): (&Profile, crate::analyse::attribution::Capture),
    (current, capture): (&Profile, crate::analyse::attribution::Capture),
) -> (crate::analyse::attribution::Attribution, Vec<FrameGrowth>) {
    use crate::analyse::attribution::{GROWN_FRAMES, Side, attribute};
    use compare::Comparable;
    let (b, a) = (
        Comparable::new(baseline, c, c.normalisation()),
        Comparable::new(current, c, c.normalisation()),
    );
    let grown = grown_frames(&b, &a, GROWN_FRAMES);
    let (now, then) = (c.shares(current), c.shares(baseline));
    let verdict = attribute(
        &Side {
            shares: &now,
            comparable: &a,
            capture,
        },
        &Side {
            shares: &then,
            comparable: &b,
            capture: base_capture,
        },
        ProfileSettings::default().min_shift_pts,
        &grown,
    );
    (verdict, grown)
}

#[test]
fn pyspy_injected_code_regression_is_attributed_to_code() {
    use crate::analyse::attribution::AttributionKind;
    let normal = pyspy("normal.collapsed");
    let regressed = pyspy("regressed.collapsed");
    assert_eq!(normal.format, ProfileFormat::Folded);
    assert_eq!(normal.skipped, 0);
    let c = service_classifier();
    let (a, grown) = attribute_pair(&c, &normal, &regressed);
    assert_eq!(a.kind, AttributionKind::CodeRegression, "{}", a.summary);
    // The frame that grew most is the injected one, and the line names it.
    assert!(grown[0].frame.starts_with("slow_scan ("), "{grown:?}");
    assert!(
        a.summary
            .starts_with("code regression: slow_scan (orders_service.py) +"),
        "{}",
        a.summary
    );
    assert!(a.application_delta_pts >= 5.0, "{}", a.line());
    assert_eq!(a.more_work, Some(true), "{}", a.line());

    // Controls: the same profile against itself, and the fix (regressed → normal).
    assert_eq!(
        attribute_pair(&c, &normal, &normal).0.kind,
        AttributionKind::Inconclusive
    );
    let fix = attribute_pair(&c, &regressed, &normal).0;
    println!("fix: {}", fix.line());
    assert_eq!(fix.kind, AttributionKind::Inconclusive, "{}", fix.line());
}

/// The real profiles of `tests/fixtures/pyspy-shop` (see its README): a
/// price-quote service on `ThreadingHTTPServer` + SQLite under k6 with
/// keep-alive, deployed as v1 (`/srv/app/v1/shop.py`) and as v2
/// (`/srv/app/v2/shop.py`, with an N+1 query injected: `rules_for_line`),
/// recorded by py-spy 0.4.3 as folded (`--format raw`) and speedscope files.
/// The recorded py-spy profiles of `tests/fixtures/pyspy-shop`, or those of
/// a re-recording (`bash record.sh DIR`) in `PERFDASH_PYSPY_SHOP=DIR`: the
/// attribution must not depend on one lucky capture.
fn shop(name: &str) -> Profile {
    let dir = std::env::var_os("PERFDASH_PYSPY_SHOP").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/pyspy-shop"
            ))
        },
        PathBuf::from,
    );
    let path = dir.join(name);
    parse(&std::fs::read(&path).unwrap(), &path).unwrap()
}

/// What a user gets with no `[profiles]` settings and with the service's
/// module named as application code.
fn shop_classifiers() -> [Classifier; 2] {
    [
        Classifier::new(&ProfileSettings::default()).unwrap(),
        Classifier::new(&ProfileSettings {
            application_prefixes: vec!["shop.".to_string()],
            ..ProfileSettings::default()
        })
        .unwrap(),
    ]
}

#[test]
fn pyspy_shop_n_plus_one_is_a_code_regression_named_by_its_function() {
    use crate::analyse::attribution::AttributionKind;
    for (v1, v2) in [
        ("v1.folded", "v2.folded"),
        ("v1.speedscope.json", "v2.speedscope.json"),
    ] {
        let (before, after) = (shop(v1), shop(v2));
        for c in shop_classifiers() {
            let (a, grown) = attribute_pair(&c, &before, &after);
            println!("{v2}: {}", a.summary);
            assert_eq!(
                a.kind,
                AttributionKind::CodeRegression,
                "{v2}: {}",
                a.summary
            );
            // The injected function is the top grown frame, by at least 10
            // points of busy time, and the line names it first.
            assert_eq!(
                grown[0].frame, "rules_for_line (shop.py)",
                "{v2}: {grown:#?}"
            );
            assert!(grown[0].total_delta_pts() >= 10.0, "{v2}: {grown:#?}");
            assert!(
                a.summary
                    .starts_with("code regression: rules_for_line (shop.py) +"),
                "{v2}: {}",
                a.summary
            );
            assert!(a.line().contains("; application share +"), "{}", a.line());
            assert!(a.application_delta_pts >= 10.0, "{v2}: {}", a.summary);
            // More busy work: the functions both versions share lost share.
            let shared = a.shared_work.unwrap();
            println!(
                "{v2}: shared work ×{:.2} over {} frames",
                shared.ratio, shared.frames
            );
            assert!(shared.ratio >= 2.0, "{v2}: {shared:?}");
            // Idle is left out of the shares compared, and it was large.
            assert!(a.changes.iter().all(|x| x.category != Category::IdleWait));
            let idle_before = c.shares(&before).idle_pct();
            assert!(idle_before > 20.0, "{v1}: idle {idle_before:.1}%");
            // No change is above 100 points.
            for g in &grown {
                assert!(g.total_delta_pts().abs() <= 100.0 && g.self_delta_pts().abs() <= 100.0);
            }
            // Controls: against itself, and the fix (v2 → v1).
            assert_eq!(
                attribute_pair(&c, &before, &before).0.kind,
                AttributionKind::Inconclusive
            );
            let fix = attribute_pair(&c, &after, &before).0;
            println!("{v1} after {v2}: {}", fix.line());
            assert_eq!(fix.kind, AttributionKind::Inconclusive, "{}", fix.line());
            assert_eq!(fix.more_work, Some(false), "{}", fix.line());
        }
    }
}

/// The throughput k6 measured while py-spy recorded (`*.k6.txt`, k6's own
/// summary: `http_reqs ... 1005   71.626566/s`).
fn shop_throughput(name: &str) -> f64 {
    let text = std::fs::read_to_string(
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/pyspy-shop"
        ))
        .join(format!("{name}.k6.txt")),
    )
    .unwrap();
    let line = text.lines().find(|l| l.contains("http_reqs")).unwrap();
    let rate = line.split_whitespace().last().unwrap();
    rate.trim_end_matches("/s").parse().unwrap()
}

/// The busy time per request of the real captures, from the throughput k6
/// measured and how `record.sh` ran py-spy (10 s at 100 Hz): v2's N+1
/// costs several times v1's busy time per request; the fix costs less.
/// The folded files count samples (the rate converts them to seconds), the
/// speedscope files weigh seconds already.
#[test]
fn pyspy_shop_busy_time_per_request() {
    use crate::analyse::attribution::{AttributionKind, Capture, PerRequest};
    use crate::model::ProfileCapture;
    let capture = |name: &str| Capture {
        throughput_rps: Some(shop_throughput(name)),
        recorded: ProfileCapture {
            duration_s: Some(10.0),
            rate_hz: Some(100.0),
        },
    };
    let c = &shop_classifiers()[0];
    for (v1, v2) in [
        ("v1.folded", "v2.folded"),
        ("v1.speedscope.json", "v2.speedscope.json"),
    ] {
        let (before, after) = (shop(v1), shop(v2));
        let (a, _) = attribute_pair_with(c, (&before, capture(v1)), (&after, capture(v2)));
        println!(
            "{v2}: {} (frames {:.1} pts, z {:?}; {:?}; {:?})",
            a.line(),
            a.frames_application_pts,
            a.frames_z,
            a.per_request,
            a.shared_work
        );
        let PerRequest::Measured {
            unit,
            before: b,
            after: x,
            ratio,
            noise,
        } = &a.per_request
        else {
            panic!("{v2}: {:?}", a.per_request);
        };
        assert_eq!(unit, "s");
        // v1 spends a few ms of busy thread time per quote; v2 several times that.
        assert!((0.002..0.02).contains(b), "{v1}: {b} s per request");
        assert!(*ratio > 4.0, "{v2}: ×{ratio} ({b} → {x})");
        assert!(*noise < 0.1, "{noise}");
        assert_eq!(a.kind, AttributionKind::CodeRegression, "{}", a.line());
        assert!(
            a.line().contains("; busy time per request ×"),
            "{}",
            a.line()
        );
        let (fix, _) = attribute_pair_with(c, (&after, capture(v2)), (&before, capture(v1)));
        println!("{v1} after {v2}: {}", fix.line());
        assert_eq!(fix.kind, AttributionKind::Inconclusive, "{}", fix.line());
        assert!(
            fix.summary
                .starts_with("inconclusive: busy time per request ×0."),
            "{}",
            fix.summary
        );
    }
}

#[test]
fn pyspy_shop_frames_survive_the_redeploy() {
    let (before, after) = (shop("v1.folded"), shop("v2.folded"));
    // As written, v1 and v2 frames never meet: the directories differ.
    assert!(
        before
            .stacks
            .keys()
            .any(|s| s.contains("/srv/app/v1/shop.py:"))
    );
    assert!(
        after
            .stacks
            .keys()
            .any(|s| s.contains("/srv/app/v2/shop.py:"))
    );
    let c = shop_classifiers()[0].clone();
    let b = compare::Comparable::new(&before, &c, Normalisation::Functions);
    let a = compare::Comparable::new(&after, &c, Normalisation::Functions);
    let changes = compare::frame_changes(&b, &a);
    // `quote` is one row, in both profiles.
    let quote = &changes["quote (shop.py)"];
    assert!(
        quote.total_before_pct > 10.0 && quote.total_after_pct > 10.0,
        "{quote:?}"
    );
    assert!(
        !changes
            .keys()
            .any(|f| f.contains("/srv/") || f.contains(".py:"))
    );
    // Kept as written, every v2 frame of the service reads as new.
    let lines = Classifier::new(&ProfileSettings {
        keep_lines: true,
        ..ProfileSettings::default()
    })
    .unwrap();
    let b = compare::Comparable::new(&before, &lines, lines.normalisation());
    let a = compare::Comparable::new(&after, &lines, lines.normalisation());
    let grown = grown_frames(&b, &a, 15);
    let quote_rows = grown
        .iter()
        .filter(|g| g.frame.starts_with("quote (/srv/app/v2/"))
        .count();
    assert!(quote_rows >= 1, "{grown:#?}");
    assert!(
        grown
            .iter()
            .filter(|g| g.frame.contains("/srv/app/v2/"))
            .all(|g| g.total_before_pct == 0.0)
    );
}

#[test]
fn pyspy_speedscope_counts_samples_not_seconds() {
    let p = shop("v1.speedscope.json");
    assert_eq!(p.units, "seconds");
    let samples = p.samples.unwrap();
    // py-spy weighs each sample by its interval at 100 Hz: 0.01 s.
    assert!(
        (p.total - samples as f64 * 0.01).abs() < 1e-6,
        "{} s, {samples} samples",
        p.total
    );
    assert!(p.total < 100.0 && samples >= 100);
    // Printed rounded in its unit, never `13.269999999999762 seconds`.
    let text = p.total_text();
    assert!(text.ends_with(" seconds"), "{text}");
    let number = text.trim_end_matches(" seconds");
    assert!(
        number.split('.').nth(1).is_none_or(|d| d.len() <= 2),
        "{text}"
    );
    // The folded capture of the same service counts the same way.
    let folded = shop("v1.folded");
    assert_eq!(folded.samples, Some(folded.total as u64));
}

#[test]
fn pyspy_without_application_prefixes_everything_unclaimed_is_application() {
    let normal = pyspy("normal.collapsed");
    let s = Classifier::new(&ProfileSettings::default())
        .unwrap()
        .shares(&normal);
    // Only the samples without any Python frame (py-spy's bare ` 115` line) are other.
    assert!(normal.root_self > 0.0);
    assert!(
        (s.pct(Category::Other) - 100.0 * normal.root_self / normal.total).abs() < 1e-9,
        "{s:?}"
    );
    let configured = service_classifier().shares(&normal);
    assert!(configured.pct(Category::Application) < s.pct(Category::Application));
    assert!(configured.pct(Category::Other) > 0.0);
}

#[test]
fn inspect_profile_reports_total_and_shares() {
    let Some(dir) = fixtures() else { return };
    let rel = "async-profiler@v3.0/demo/flamegraph.html";
    let s = inspect_profile(
        &read(&dir, rel),
        Path::new(rel),
        &ProfileSettings::default(),
    )
    .unwrap();
    assert_eq!(s.total, 584.0);
    assert_eq!(s.root_self, 1.0);
    assert!((s.shares[&Category::Gc] - 18.5).abs() < 0.5);
    let table = s.to_table();
    assert!(table.contains("total 584 samples"), "{table}");
    assert!(table.contains("GC"), "{table}");
    assert_eq!(s.top_frames.len(), TOP_FRAMES);
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["shares"]["gc"], s.shares[&Category::Gc]);
}

// ---------- properties ----------

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Frame names as profilers write them: spaces, generics, punctuation,
    /// digits, but no `;` (the separator), not ending in whitespace, and not
    /// starting with `/` or `#` (a stack starting `//` or `#` is a comment line),
    /// and not ending in a number such as `0.` (`a 0. 1` is a differential
    /// line, `stack before after`, in FlameGraph's format).
    fn frame() -> impl Strategy<Value = String> {
        "[a-zA-Z_<>&'\"(),.:$0-9{][a-zA-Z_<>&'\"(),.:/$ 0-9{}]{0,20}[a-zA-Z_<>&'\"(),:/$)}]"
    }

    fn stacks() -> impl Strategy<Value = BTreeMap<String, u32>> {
        proptest::collection::btree_map(
            proptest::collection::vec(frame(), 1..6).prop_map(|f| f.join(";")),
            1u32..100_000,
            1..30,
        )
    }

    proptest! {
        // Each case parses and classifies; 64 keep the suite quick on a shared machine.
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn folded_lines_round_trip(stacks in stacks(), crlf in any::<bool>()) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let text: String = stacks.iter().map(|(s, n)| format!("{s} {n}{eol}")).collect();
            let p = parse(text.as_bytes(), Path::new("flame.txt")).unwrap();
            prop_assert_eq!(p.skipped, 0);
            let want: BTreeMap<String, f64> = stacks.iter().map(|(s, n)| (s.clone(), *n as f64)).collect();
            prop_assert_eq!(&owned(&p.stacks), &want);
            prop_assert_eq!(p.total, stacks.values().map(|n| *n as f64).sum::<f64>());
        }

        #[test]
        fn shares_cover_the_whole_profile(stacks in stacks()) {
            let text: String = stacks.iter().map(|(s, n)| format!("{s} {n}\n")).collect();
            let p = parse_folded(&text, Path::new("f"), "cpu").unwrap();
            let s = Classifier::new(&ProfileSettings::default()).unwrap().shares(&p);
            let sum: f64 = s.shares.iter().map(|(_, v)| v).sum();
            prop_assert!((sum - 100.0).abs() < 1e-6);
        }

        #[test]
        fn attribution_ignores_sample_scale(stacks in stacks(), k in 2u32..10) {
            let text: String = stacks.iter().map(|(s, n)| format!("{s} {n}\n")).collect();
            let scaled: String = stacks.iter().map(|(s, n)| format!("{s} {}\n", n * k)).collect();
            let c = Classifier::new(&ProfileSettings::default()).unwrap();
            let a = parse_folded(&text, Path::new("f"), "cpu").unwrap();
            let b = parse_folded(&scaled, Path::new("f"), "cpu").unwrap();
            // The same profile captured k times longer: nothing moved, no
            // frame grew, and the work the frames share is the same.
            let (verdict, grown) = attribute_pair(&c, &a, &b);
            prop_assert_eq!(verdict.kind, crate::analyse::attribution::AttributionKind::Inconclusive);
            prop_assert!(verdict.application_delta_pts.abs() < 1e-6);
            prop_assert!(grown.is_empty(), "{:?}", grown);
            prop_assert!(verdict.top_frames.is_empty());
            if let Some(s) = verdict.shared_work {
                prop_assert!((s.ratio - 1.0).abs() < 1e-9, "{:?}", s);
            }
        }
    }
}

#[test]
fn perf_script_with_a_header_and_blank_lines_before_the_first_event() {
    // `perf script --header` writes `#` lines; a blank line before the first
    // event used to panic inferno's collapser (found by fuzzing).
    let body = "java 4242 [001] 1000.000001: 1000 cycles:\n\
                \t7f0000000001 parseOrder (/srv/app.so)\n\
                \t7f0000000002 main (/srv/app.so)\n\n\
                java 4242 [001] 1000.000002: 1000 cycles:\n\
                \t7f0000000003 writeJson (/srv/app.so)\n\
                \t7f0000000002 main (/srv/app.so)\n\n";
    let plain = collapse_perf(body, PerfOptions::PLAIN).unwrap();
    let with_header = format!("# ========\n# captured on: today\n#\n\n\n{body}");
    assert_eq!(
        collapse_perf(&with_header, PerfOptions::PLAIN).unwrap(),
        plain
    );
    // Weighted by the period (1000 cycles each).
    assert_eq!(
        plain,
        "java;main;parseOrder 1000\njava;main;writeJson 1000\n"
    );
    // Input with no event at all is an error or empty, never a panic.
    for odd in [
        "\n",
        "\n\n\n",
        "# only a comment\n\n",
        "not perf\n\n\tframe\n",
    ] {
        let _ = collapse_perf(odd, PerfOptions::PLAIN);
    }
}

#[test]
fn a_no_break_space_is_part_of_a_frame_name_not_a_separator() {
    // Found by fuzzing: U+00A0 before the count panicked the parser.
    let p = parse_folded(
        "main;format\u{a0}price 7\nmain;idle\u{a0}3\n",
        Path::new("flame.folded"),
        "cpu",
    )
    .unwrap();
    assert_eq!(p.total, 7.0, "{:?}", p.warnings);
    assert_eq!(
        p.warnings,
        ["line 2: skipped, not `stack count`: main;idle\u{a0}3"]
    );
}

#[test]
fn non_ascii_frame_names_come_through_inferno_intact() {
    // Found by fuzzing: inferno's Rust-symbol fix-up slices the last 17
    // bytes of a name and panicked inside a multi-byte character.
    let perf = "java 4242 [001] 1000.000001: 1000 cycles:\n\
                \t7f0000000001 Bestellung.prüfePreisÄnderungÜberall (/tmp/perf-4242.map)\n\
                \t7f0000000002 main (/srv/app.so)\n\n";
    assert_eq!(
        collapse_perf(perf, PerfOptions::PLAIN).unwrap(),
        "java;main;Bestellung.prüfePreisÄnderungÜberall 1000\n"
    );
    // DTrace lists the leaf first.
    let dtrace = "\n\n  libc.so.1`main+0x1\n  app`注文を確認する処理です+0x10\n  5\n";
    assert_eq!(
        collapse_dtrace(dtrace).unwrap(),
        "app`注文を確認する処理です;libc.so.1`main 5\n"
    );
    // The shield characters themselves survive too.
    assert_eq!(
        perf::unshield(&perf::shield_non_ascii("a\u{1}b\u{2}é😀")),
        "a\u{1}b\u{2}é😀"
    );
}

#[test]
fn dtrace_counts_without_a_stack_count_nothing() {
    // Found by fuzzing: a count line with no stack before it overflowed
    // inferno's DTrace collapser.
    let dtrace = "CPU ID FUNCTION:NAME\n\n  app`main+0x1\n  3\n\n  7\n\n  app`work+0x2\n  app`main+0x1\n  5\n";
    assert_eq!(
        collapse_dtrace(dtrace).unwrap(),
        "app`main 3\napp`main;app`work 5\n"
    );
}

#[test]
fn absurd_counts_and_periods_are_refused_with_their_line() {
    // Found by fuzzing: inferno sums counts in u64 without checking.
    let dtrace =
        "\n\n  app`main+0x1\n  7000000000000000000\n\n  app`main+0x1\n  7000000000000000000\n";
    let err = collapse_dtrace(dtrace).unwrap_err();
    assert!(
        err.to_string().starts_with("line 4: a sample count"),
        "{err}"
    );
    let perf = "# header\n\njava 4242 [001] 1000.000001: 99999999999999999999 cycles:\n\t7f01 main (/srv/app.so)\n\n";
    let err = collapse_perf(perf, PerfOptions::PLAIN).unwrap_err();
    assert!(
        err.to_string().starts_with("line 3: a sample count"),
        "{err}"
    );
    // Real periods (here 2.5 × 10^6 cycles) are fine.
    let perf = "java 4242 [001] 1000.000001: 2500000 cycles:\n\t7f01 main (/srv/app.so)\n\n";
    assert_eq!(
        collapse_perf(perf, PerfOptions::PLAIN).unwrap(),
        "java;main 2500000\n"
    );
}

/// The classifier memoises each frame's flags across profiles (issue 18:
/// the same frames recur in every profile of an archive). One classifier
/// that has already seen every other profile must still give each stack
/// the category that matching every frame afresh gives, for the real
/// third-party profiles (skipped without ../shared/fixtures) and the
/// recorded py-spy ones, with the default rules and with application
/// prefixes.
#[test]
fn memoised_frame_flags_classify_like_matching_afresh() {
    let mut profiles = vec![
        pyspy("normal.collapsed"),
        pyspy("regressed.collapsed"),
        shop("v1.folded"),
        shop("v2.folded"),
    ];
    if let Some(dir) = fixtures() {
        for rel in [
            "FlameGraph/example-perf-stacks.txt.gz",
            "FlameGraph/test/perf-dd-stacks-01.txt",
            "async-profiler/.assets/html/flamegraph.html",
            "async-profiler@v2.9/demo/flamegraph.html",
            "async-profiler@v3.0/demo/flamegraph.html",
            "inferno/tests/data/collapse-recursive/basic.txt",
        ] {
            profiles.push(parse_fixture(&dir, rel));
        }
    }
    let settings = [
        ProfileSettings::default(),
        ProfileSettings {
            application_prefixes: vec!["orders_service.".into(), "shop.".into(), "java/".into()],
            ..ProfileSettings::default()
        },
    ];
    for settings in &settings {
        // Every frame matched afresh, once per profile.
        let expected: Vec<Vec<Category>> = profiles
            .iter()
            .map(|p| {
                let fresh = Classifier::new(settings).unwrap();
                p.stacks.keys().map(|s| fresh.classify_stack(s)).collect()
            })
            .collect();
        let shared = Classifier::new(settings).unwrap();
        // Twice over every profile: the second pass finds every frame in
        // the memo, filled by all the profiles.
        for pass in 0..2 {
            for (p, expected) in profiles.iter().zip(&expected) {
                let got: Vec<Category> = shared
                    .stack_categories(p)
                    .into_iter()
                    .map(|(_, _, c)| c)
                    .collect();
                assert_eq!(&got, expected, "pass {pass}");
            }
        }
    }
}

/// The profiles of one build share each stack's string, and a profile's
/// comparable form shares the strings normalising left as they were;
/// neither changes what the profiles say.
#[test]
fn profiles_share_their_stacks_and_comparable_forms_share_unchanged_ones() {
    let parse = |text: &str| parse_folded(text, Path::new("p.collapsed"), "cpu").unwrap();
    let a_text = "main;app.Orders.find 5\nmain;app.Orders.find;java.util.HashMap.get 3\n";
    let b_text = "main;app.Orders.find 7\nmain;app.Lambda$$Lambda$42/0x1234.run 2\n";
    let (mut a, mut b) = (parse(a_text), parse(b_text));
    let interner = StackInterner::default();
    interner.intern(&mut a);
    interner.intern(&mut b);
    assert_eq!(a, parse(a_text), "interning changes no stack or weight");
    assert_eq!(b, parse(b_text));
    let key = |p: &Profile, s: &str| p.stacks.get_key_value(s).unwrap().0.clone();
    let find = "main;app.Orders.find";
    assert!(
        Arc::ptr_eq(&key(&a, find), &key(&b, find)),
        "one string for both"
    );

    let c = Classifier::new(&ProfileSettings::default()).unwrap();
    let comparable = compare::Comparable::new(&b, &c, c.normalisation());
    let shared = comparable.stacks.get_key_value(find).unwrap().0;
    assert!(
        Arc::ptr_eq(shared, &key(&b, find)),
        "unchanged by normalising"
    );
    assert_eq!(comparable.stacks.len(), 2);
    assert!(
        comparable.stacks.keys().any(|s| !b.stacks.contains_key(s)),
        "the lambda's serial number is normalised away: a string of its own"
    );
}

#[test]
fn every_profile_format_is_listed_once() {
    for (i, f) in super::ProfileFormat::ALL.iter().enumerate() {
        assert_eq!(f.index(), i, "{f:?}");
    }
}
