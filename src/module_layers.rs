//! The order of the modules under `src/`, checked.
//!
//! Each top-level module may use only modules in layers below its own, so
//! no dependency circle can form and the stages stay stages (ingest →
//! model → analyse → render → write). The same order is in the README's
//! code map. The check reads the sources as text: every `crate::…` path
//! outside comments, string literals and `#[cfg(test)]` items counts
//! (tests may reach anywhere: the demo's tests run the analysis).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Lowest first. A module may use modules of earlier layers only.
const LAYERS: &[&[&str]] = &[
    // One escaper per output target, which the terminal text (`term`)
    // and every report use.
    &["escape"],
    // Leaves: plain functions over plain values.
    &[
        "error",
        "stats",
        "hash",
        "stat_stamp",
        "calendar",
        "doc_section",
        "term",
        "cleanup",
        "decimal",
        "shared_fixtures",
        "lookalike",
    ],
    &["slug"],
    // Settings: plain data and their validation.
    &["config"],
    // Parsed profiles, then the data model that holds them.
    &["profile"],
    &["model"],
    // What is kept between builds: one store, one framing, one way to
    // make keys.
    &["cache"],
    // The only code that reads the archive.
    &["ingest"],
    // Archives on object storage: a local copy that ingest then reads.
    &["remote"],
    &["analyse", "fuzzing"],
    &["eval", "render"],
    &["report", "write"],
    &["demo", "pipeline", "record"],
    &["cli"],
];

/// Files that only ever compile into tests.
const TEST_FILES: &[&str] = &["tests.rs", "test_support.rs", "module_layers.rs"];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Top-level module → the other top-level modules its non-test code uses.
fn dependencies(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
        let entry = entry.unwrap();
        let path = entry.path();
        let name = entry.file_name().to_string_lossy();
        if !name.ends_with(".rs") || TEST_FILES.contains(&name.as_ref()) {
            continue;
        }
        let rel = path.strip_prefix(src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let code = without_test_items(&code_only(&std::fs::read_to_string(path).unwrap()));
        let used = out.entry(top.clone()).or_default();
        used.extend(crate_paths(&code).into_iter().filter(|m| *m != top));
    }
    out
}

/// The source with comments removed and string and character literals
/// emptied, so that only code is searched.
fn code_only(src: &str) -> String {
    let s: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let at = |i: usize, text: &str| {
        text.chars()
            .enumerate()
            .all(|(k, c)| s.get(i + k) == Some(&c))
    };
    while i < s.len() {
        let c = s[i];
        if at(i, "//") {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < s.len() {
                if at(i, "/*") {
                    depth += 1;
                    i += 2;
                } else if at(i, "*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r'
            && matches!(s.get(i + 1), Some('"' | '#'))
            && !(i > 0 && (s[i - 1].is_alphanumeric() || s[i - 1] == '_'))
        {
            // A raw string r"…" or r#"…"#.
            let hashes = s[i + 1..].iter().take_while(|c| **c == '#').count();
            if s.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            i += 2 + hashes;
            while i < s.len() && !at(i, &close) {
                i += 1;
            }
            i += close.len();
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < s.len() && s[i] != '"' {
                i += if s[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7}') or a lifetime ('a).
            if s.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < s.len() && s[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if s.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The code without `#[cfg(test)]` items (an inline `mod tests { … }` or
/// a `mod tests;` declaration).
fn without_test_items(code: &str) -> String {
    const ATTR: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find(ATTR) {
        out.push_str(&rest[..at]);
        let item = &rest[at + ATTR.len()..];
        let semi = item.find(';');
        let brace = item.find('{');
        let end = match (semi, brace) {
            (Some(s), Some(b)) if s < b => s + 1,
            (Some(s), None) => s + 1,
            (_, Some(b)) => {
                let mut depth = 0;
                let mut end = item.len();
                for (k, c) in item[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The top-level modules named by `crate::x…` and `crate::{x…, y…}` paths.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `$crate::`, `my_crate::`
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group, split at commas outside braces.
            let mut depth = 1;
            let mut start = 0;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => {
                        out.insert(ident(&group[start..k]));
                        start = k + 1;
                    }
                    _ => {}
                }
                if depth == 0 {
                    out.insert(ident(&group[start..k]));
                    break;
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.remove("");
    out
}

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let deps = dependencies(&src());
    let mut wrong = Vec::new();
    for (module, used) in &deps {
        let Some(layer) = layer_of(module) else {
            wrong.push(format!(
                "{module} is in no layer: add it to LAYERS (and the README's code map)"
            ));
            continue;
        };
        for u in used {
            match layer_of(u) {
                Some(l) if l < layer => {}
                _ => wrong.push(format!("{module} (layer {layer}) uses {u}")),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn config_is_a_leaf_of_the_stages() {
    let deps = dependencies(&src());
    let config = &deps["config"];
    for stage in ["analyse", "ingest", "profile", "render", "model"] {
        assert!(!config.contains(stage), "config uses {stage}: {config:?}");
    }
}

#[test]
fn the_layer_order_has_no_circle_and_names_every_module() {
    // The layers themselves admit no circle (each edge goes down); this
    // checks the graph directly too, so that a mistake in LAYERS cannot
    // hide one.
    let deps = dependencies(&src());
    let mut done: BTreeSet<&str> = BTreeSet::new();
    while done.len() < deps.len() {
        let next: Vec<&str> = deps
            .iter()
            .filter(|(m, used)| {
                !done.contains(m.as_str())
                    && used
                        .iter()
                        .all(|u| done.contains(u.as_str()) || !deps.contains_key(u))
            })
            .map(|(m, _)| m.as_str())
            .collect();
        assert!(
            !next.is_empty(),
            "a dependency circle among {:?}",
            deps.keys()
                .filter(|m| !done.contains(m.as_str()))
                .collect::<Vec<_>>()
        );
        done.extend(next);
    }
    let listed: BTreeSet<&str> = LAYERS.iter().flat_map(|l| l.iter().copied()).collect();
    let found: BTreeSet<&str> = deps.keys().map(String::as_str).collect();
    assert_eq!(
        listed, found,
        "LAYERS and src/ disagree on the modules there are"
    );
    // The README's code map states the same order.
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let order = LAYERS
        .iter()
        .map(|l| l.join(", "))
        .collect::<Vec<_>>()
        .join(" → ");
    assert!(
        readme.contains(&order),
        "README.md should state the module order `{order}`"
    );
}

/// The source files that may write to the disk, and what each writes
/// (docs/errors.md, "Output safety", says the same).
const WRITERS: &[(&str, &str)] = &[
    ("write.rs", "the site, swapped in whole"),
    ("write/lock.rs", "the lock file beside the output"),
    (
        "cleanup.rs",
        "what an interrupted build wrote, removed on SIGINT/SIGTERM",
    ),
    (
        "cache/mod.rs",
        "the cache beside the output (run records and the index), after the site",
    ),
    ("demo/mod.rs", "`perfdash demo`: a new archive"),
    (
        "cli/demo.rs",
        "`perfdash demo`: the folder beside `--out` it writes into, renamed into place",
    ),
    ("cli/eval.rs", "`perfdash eval --write FILE`"),
    (
        "record/mod.rs",
        "`perfdash record`: one new run under runs/, renamed in whole",
    ),
    (
        "record/profile.rs",
        "`record --profile-on-regression`: the new run's flame graph, renamed in, never over a file",
    ),
    ("fuzzing.rs", "a temporary file for the fuzz input"),
    (
        "remote/mirror.rs",
        "the local copy of an archive on object storage, in its own cache folder",
    ),
    (
        "remote/publish.rs",
        "`record` into object storage: the archive's perfdash.toml into record's temporary archive",
    ),
];

#[test]
fn only_the_listed_files_write() {
    const WRITING: &[&str] = &[
        "fs::write(",
        "File::create",
        "create_dir",
        "fs::rename(",
        "remove_file(",
        "remove_dir",
        ".persist(",
        "tempdir_in(",
        "OpenOptions",
        "NamedTempFile::",
        "fs::copy(",
        "hard_link(",
        "fs::symlink(",
    ];
    let src = src();
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(&src).sort_by_file_name() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy();
        if !name.ends_with(".rs") || TEST_FILES.contains(&name.as_ref()) {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let code = without_test_items(&code_only(&std::fs::read_to_string(entry.path()).unwrap()));
        if WRITERS.iter().any(|(w, _)| *w == rel) {
            continue;
        }
        for call in WRITING.iter().filter(|c| code.contains(**c)) {
            found.push(format!("src/{rel} calls {call}"));
        }
    }
    assert!(
        found.is_empty(),
        "only {:?} write files (docs/errors.md, Output safety); write through src/write.rs or \
         add the file to WRITERS and the docs:\n{}",
        WRITERS.iter().map(|(w, _)| *w).collect::<Vec<_>>(),
        found.join("\n")
    );
}

#[test]
fn the_scanner_sees_code_only() {
    let code = code_only(
        "use crate::a::X; // crate::b\n/* crate::c /* nested */ crate::d */ let s = \"crate::e\";\n\
         let r = r#\"crate::f\"#; let c = '\"'; fn g<'x>() { crate::{h::Y, i}; }",
    );
    assert_eq!(
        crate_paths(&code),
        ["a", "h", "i"].map(String::from).into_iter().collect()
    );
    let code = without_test_items(
        "crate::a::f();\n#[cfg(test)]\nmod tests { crate::b::g(); }\n#[cfg(test)]\nmod more;\ncrate::c::h();",
    );
    assert_eq!(
        crate_paths(&code),
        ["a", "c"].map(String::from).into_iter().collect()
    );
}

/// Functions longer than this need a reason to stay whole (issue 16: a
/// newcomer should be able to read a function at once).
const LONG_FUNCTION_LINES: usize = 120;

/// The functions over [`LONG_FUNCTION_LINES`] lines, by file and name, and
/// why they are still whole. A function not listed here fails the test;
/// one that shrinks below the limit can leave the list.
const LONG_FUNCTIONS: &[(&str, &str, &str)] = &[
    (
        "eval/mod.rs",
        "to_markdown",
        "the generated section of docs/detection.md in the order it reads (targets, fleets, sweep, \
         scenarios, rules); grew past 120 lines with issue 33's targets and rules; to split per table",
    ),
    (
        "render/data.rs",
        "write_analysis_json",
        "one literal of analysis.json's top level, field by field; grew with the merge of issue 33's \
         weekly groups and issue 34's improvements; to split with the weekly part as its own builder",
    ),
    (
        "report/check.rs",
        "junit",
        "one JUnit document in order (suite, properties, cases, run-wide case, errors); grew with the \
         merge of issue 33's run-wide case and issue 32's headline suite; to split per case kind",
    ),
    (
        "analyse/gate.rs",
        "check",
        "the gate's one decision read top to bottom: the run, each endpoint's check, every \
         reason it cannot vouch, then the outcome (verdicts in one place)",
    ),
    (
        "analyse/alarms.rs",
        "episodes",
        "the alarm state machine, one match per state (verdicts)",
    ),
    (
        "demo/mod.rs",
        "plan",
        "the demo's calendar, one event after another as the story tells it",
    ),
    (
        "demo/mod.rs",
        "rounds_for",
        "every event's effect on one run's rounds, in the story's order",
    ),
    (
        "demo/summary.rs",
        "render",
        "writes one k6 handleSummary() document field by field in k6's order",
    ),
    (
        "profile/speedscope.rs",
        "parse",
        "one pass over a speedscope document: evented and sampled profiles share the frame table",
    ),
    (
        "render/flame_pages.rs",
        "render_one",
        "one flame page's parts in page order (flame, issue 21)",
    ),
    (
        "ingest/raw/gatling_binary.rs",
        "read",
        "one pass over Gatling's binary log, record kind by record kind (gatling, issue 20)",
    ),
];

/// `(file, name, first line, lines)` of every function outside tests, read
/// from rustfmt-formatted text: a function ends at the first `}` at its
/// own indentation. Test modules (`#[cfg(test)] mod …`) and test files are
/// skipped.
fn functions(src: &Path) -> Vec<(String, String, usize, usize)> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy();
        if !name.ends_with(".rs") || TEST_FILES.contains(&name.as_ref()) {
            continue;
        }
        let rel = entry.path().strip_prefix(src).unwrap();
        let file = rel.to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let indent = |l: &str| l.len() - l.trim_start().len();
        let close = |from: usize, at: usize| {
            (from..lines.len())
                .find(|&j| lines[j].trim_end() == format!("{}}}", " ".repeat(at)))
                .unwrap_or(lines.len() - 1)
        };
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            let next = lines.get(i + 1).map(|l| l.trim_start()).unwrap_or("");
            if line.trim() == "#[cfg(test)]" && next.starts_with("mod ") && next.ends_with('{') {
                i = close(i + 2, indent(lines[i + 1])) + 1;
                continue;
            }
            let item = line
                .trim_start()
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub(super) ")
                .trim_start_matches("pub ")
                .trim_start_matches("const ")
                .trim_start_matches("unsafe ");
            if let Some(rest) = item.strip_prefix("fn ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                // A signature without a body (in a trait) ends with `;`
                // before any `{`; a one-line function closes on its line.
                let header_end = (i..lines.len())
                    .find(|&j| lines[j].trim_end().ends_with(['{', ';']) || lines[j].ends_with('}'))
                    .unwrap_or(i);
                if !lines[header_end].trim_end().ends_with('{') {
                    i = header_end + 1;
                    continue;
                }
                let end = close(header_end + 1, indent(line));
                out.push((file.clone(), name, i + 1, end - i + 1));
            }
            i += 1;
        }
    }
    out
}

#[test]
fn no_function_is_long_without_a_reason() {
    let all = functions(&src());
    assert!(
        all.len() > 500,
        "the scanner found only {} functions",
        all.len()
    );
    // Every reason given names a function that is still long: a stale
    // entry would let the next function of that name grow unseen.
    let stale: Vec<String> = LONG_FUNCTIONS
        .iter()
        .filter(|(f, fn_name, _)| {
            !all.iter()
                .any(|(file, name, _, n)| file == f && name == fn_name && *n > LONG_FUNCTION_LINES)
        })
        .map(|(f, fn_name, _)| format!("src/{f} {fn_name}"))
        .collect();
    assert!(
        stale.is_empty(),
        "LONG_FUNCTIONS names functions that are no longer over {LONG_FUNCTION_LINES} lines \
         (or no longer there): remove them:\n{}",
        stale.join("\n")
    );
    let long: Vec<String> = all
        .iter()
        .filter(|(file, name, _, n)| {
            *n > LONG_FUNCTION_LINES
                && !LONG_FUNCTIONS
                    .iter()
                    .any(|(f, fn_name, _)| f == file && fn_name == name)
        })
        .map(|(file, name, line, n)| format!("src/{file}:{line} {name}: {n} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "functions over {LONG_FUNCTION_LINES} lines: split them, or list them in \
         LONG_FUNCTIONS with the reason they stay whole:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_function_scanner_measures_what_rustfmt_writes() {
    let dir = tempfile::tempdir().unwrap();
    let code = "\
pub(crate) fn short() -> u8 {
    1
}

trait T {
    fn declared(&self);
    fn one_line(&self) {}
}

fn three(
    a: u8,
) -> u8 {
    if a > 0 {
        return a;
    }
    a
}

#[cfg(test)]
mod tests {
    fn skipped() {
        let x = 1;
    }
}
";
    std::fs::write(dir.path().join("x.rs"), code).unwrap();
    let found: Vec<(String, usize, usize)> = functions(dir.path())
        .into_iter()
        .map(|(_, name, line, n)| (name, line, n))
        .collect();
    assert_eq!(
        found,
        [("short".to_string(), 1, 3), ("three".to_string(), 10, 8)]
    );
}
