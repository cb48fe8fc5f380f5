//! The settings the documentation shows are the settings perfdash reads.
//!
//! Every `perfdash.toml` example in README.md and docs/ (a ```toml block
//! whose first table is a settings section) must parse as settings, and
//! every value it gives must be the default, except where the default is
//! empty (a list, a map, an unset option): there the docs show an example.
//! Issue 16: a default changed in code kept its old value in the docs.

use std::path::Path;

use toml::Value;

use super::Settings;

/// The top-level sections of `perfdash.toml`.
fn sections() -> Vec<String> {
    match Value::try_from(Settings::default()).expect("settings serialize") {
        Value::Table(t) => t.keys().cloned().collect(),
        other => panic!("settings serialize to a table, not {other}"),
    }
}

/// The ```toml blocks of a Markdown text, each with the line it starts on.
fn toml_blocks(text: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.trim_end()) {
            (None, "```toml") => open = Some((i + 2, String::new())),
            (Some(_), "```") => blocks.extend(open.take()),
            (Some((_, body)), line) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// Leaves of `value` as dotted paths (arrays are leaves).
fn leaves(prefix: &str, value: &Value, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Table(t) => {
            for (k, v) in t {
                leaves(&format!("{prefix}{k}."), v, out);
            }
        }
        v => out.push((prefix.trim_end_matches('.').to_string(), v.clone())),
    }
}

fn lookup<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(value, |v, key| v.get(key))
}

/// Equal as settings: 5 and 5.0 are one number.
fn same(a: &Value, b: &Value) -> bool {
    let number = |v: &Value| match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    };
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// A default that is empty or unset: the docs show an example instead.
fn empty(default: Option<&Value>) -> bool {
    match default {
        None => true,
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Table(t)) => t.is_empty(),
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    }
}

/// Problems with one block, `where` naming it.
fn check_block(body: &str, place: &str, defaults: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if let Err(e) = Settings::parse(body, Path::new(place)) {
        problems.push(format!("{place}: not valid perfdash.toml: {e}"));
        return problems;
    }
    let shown: Value = toml::from_str(body).expect("parsed above");
    let mut shown_leaves = Vec::new();
    leaves("", &shown, &mut shown_leaves);
    for (path, value) in shown_leaves {
        // Per-endpoint settings override the defaults by design.
        if path.starts_with("endpoints.") {
            continue;
        }
        let default = lookup(defaults, &path);
        if empty(default) {
            continue;
        }
        let default = default.expect("not empty");
        if !same(&value, default) {
            problems.push(format!(
                "{place}: `{path} = {value}`, but the default is {default}"
            ));
        }
    }
    problems
}

fn documents(root: &Path) -> Vec<(String, String)> {
    let mut docs = vec![("README.md".to_string(), root.join("README.md"))];
    let mut entries: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ is there")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    entries.sort();
    for p in entries {
        let name = format!("docs/{}", p.file_name().unwrap().to_string_lossy());
        docs.push((name, p));
    }
    docs.into_iter()
        .map(|(name, path)| {
            let text = std::fs::read_to_string(&path).expect("readable document");
            (name, text)
        })
        .collect()
}

#[test]
fn the_documented_settings_are_the_defaults() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let defaults = Value::try_from(Settings::default()).unwrap();
    let sections = sections();
    let mut checked = Vec::new();
    let mut problems = Vec::new();
    for (name, text) in documents(root) {
        for (line, body) in toml_blocks(&text) {
            let first_table = body
                .lines()
                .map(str::trim)
                .find(|l| l.starts_with('['))
                .map(|l| l.trim_matches(|c| c == '[' || c == ']'));
            let Some(section) = first_table.and_then(|t| t.split('.').next()) else {
                continue;
            };
            // run.toml, triage labels and the like have tables of their own.
            if !sections.iter().any(|s| s == section) || body.contains("started_at") {
                continue;
            }
            let place = format!("{name}:{line}");
            problems.extend(check_block(&body, &place, &defaults));
            checked.push(place);
        }
    }
    // The blocks this test exists for: if the docs lose them, say so.
    for must in ["docs/archive.md", "docs/alarms.md", "docs/errors.md"] {
        assert!(
            checked.iter().any(|p| p.starts_with(must)),
            "no perfdash.toml block found in {must} (checked: {checked:?})"
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_changed_default_is_caught() {
    let defaults = Value::try_from(Settings::default()).unwrap();
    let body = "[analysis]\nthreshold_ratio = 1.2\nbaseline_window = 10\n";
    let problems = check_block(body, "x.md:1", &defaults);
    assert_eq!(
        problems,
        ["x.md:1: `analysis.threshold_ratio = 1.2`, but the default is 1.15"]
    );
    let typo = check_block("[analysis]\nthreshold = 1.15\n", "x.md:1", &defaults);
    assert!(typo[0].contains("not valid perfdash.toml"), "{typo:?}");
    // An example where the default is empty is not a default to check.
    let example = "[compare]\npairs = [[\"latest~1\", \"latest\"]]\n";
    assert!(check_block(example, "x.md:1", &defaults).is_empty());
}
