//! Profiles (flame-graph inputs): one in-memory model for every format.
//!
//! Pure: [`parse`] turns the bytes of one file into a [`Profile`]; nothing
//! here reads or writes files. The format is told apart by content, never by
//! the file extension (see `docs/profiles.md` and FORMATS.md §5):
//!
//! * folded/collapsed stacks (FlameGraph/inferno stackcollapse, async-profiler
//!   `-o collapsed`, py-spy `--format raw`), including fractional counts, CRLF,
//!   UTF-16 with a BOM, comment lines and differential lines;
//! * async-profiler HTML flame graphs in all three encodings;
//! * `perf script` text, collapsed with inferno;
//! * speedscope JSON (sampled and evented profiles);
//! * DTrace stack aggregations, collapsed with inferno;
//! * Go pprof profiles (gzipped protobuf);
//! * JFR recordings' execution samples (JDK 11 and later);
//! * py-spy's Chrome trace (`--format chrometrace`).
//!
//! A file that is none of these but looks like something known (a
//! perf.data, a load tool's HTML report) is refused with what to file
//! instead ([`crate::lookalike`]).

mod chrometrace;
pub mod classify;
pub mod compare;
mod folded;
mod html;
mod jfr;
pub mod normalise;
mod perf;
mod pprof;
mod speedscope;
mod text;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::error::Error;

pub use classify::{Category, CategoryShares, Classifier};
pub use compare::{FrameGrowth, grown_frames};
pub use folded::parse_folded;
pub use normalise::Normalisation;
pub use perf::{PerfOptions, collapse_dtrace, collapse_perf};

/// The profile kind assumed when a file name carries none (`flame.html`).
pub const DEFAULT_KIND: &str = "cpu";

/// A folded stack, `root;…;leaf`, shared between the profiles that hold it.
pub type Stack = Arc<str>;

/// The most entries each memo of stacks or frames kept while profiles are
/// classified, normalised and compared holds (the classifier's frames, an
/// endpoint's stacks and frames, its frames' numbers by stack); past it, what
/// is not in the memo is worked out again each time it is met (the same
/// result, only slower), so memory stays bounded. Real profiles hold a few
/// thousand to a few tens of thousands of distinct stacks and frames: their
/// memos never fill. A profile of 2,000,000 distinct frames filled them all,
/// and they held 60 % of a build's peak (1.31 GB, issue 35). The library's
/// own tests use 64, so that every test of classifying, normalising and
/// comparing a profile of more than 64 stacks or frames also checks the
/// results past a full memo (the integration tests use the real bound).
pub(crate) const MEMO_ENTRIES: usize = if cfg!(test) { 64 } else { 1 << 18 };

/// Hands out one shared [`Stack`] per distinct stack, for the profiles of
/// one build: at 120 endpoints × 156 weeks the demo's 680 profiles held
/// 38 MB of stack strings, nearly all of them repeats (issue 18: a fifth of
/// a build's peak heap, twice over with their comparable forms). Safe to
/// use from every thread.
#[derive(Default)]
pub struct StackInterner {
    stacks: Mutex<HashSet<Stack, std::hash::BuildHasherDefault<crate::hash::FastHasher>>>,
}

impl StackInterner {
    /// `profile` with each of its stacks replaced by the shared copy
    /// (the first profile to hold a stack provides it).
    pub fn intern(&self, profile: &mut Profile) {
        // A poisoned lock only means another thread panicked mid-insert;
        // the set is still a set.
        let mut stacks = self.stacks.lock().unwrap_or_else(|e| e.into_inner());
        profile.stacks = std::mem::take(&mut profile.stacks)
            .into_iter()
            .map(|(stack, weight)| match stacks.get(&stack) {
                Some(shared) => (shared.clone(), weight),
                None => {
                    stacks.insert(stack.clone());
                    (stack, weight)
                }
            })
            .collect();
    }
}

/// One profile: weights per distinct stack.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    /// `cpu`, `alloc`, `lock`, `wall`, … from `flame[.<kind>].<ext>`.
    pub kind: String,
    /// Which format the file was recognised as.
    pub format: ProfileFormat,
    /// What the weights count: `samples` unless the input says otherwise
    /// (async-profiler v4 `units`, speedscope `unit`, a perf event's period).
    pub units: String,
    /// How many samples the profile holds, apart from what they weigh: a
    /// py-spy speedscope file weighs 2,016 samples as 20.16 seconds. `None`
    /// when the format does not record it (weights in bytes or ns without
    /// sample counts, evented speedscope profiles).
    pub samples: Option<u64>,
    /// Folded stack `root;…;leaf` → weight (samples, bytes, ns, …). Shared
    /// strings: a stack is usually in many profiles (every run of an
    /// endpoint runs the same code) and in each profile's comparable form
    /// ([`StackInterner`], [`compare::Comparable`]).
    pub stacks: BTreeMap<Stack, f64>,
    /// Everything the input accounts for: the stacks plus [`root_self`](Self::root_self).
    pub total: f64,
    /// Weight attributed to the root itself (samples with an empty stack).
    /// async-profiler HTML shows these in its `all` frame: the v3 demo's page
    /// says 584 samples while its stacks sum to 583.
    pub root_self: f64,
    /// Lines or records that were skipped (comments are not counted).
    pub skipped: usize,
    /// Non-fatal problems, each naming the 1-based line when there is one.
    pub warnings: Vec<String>,
}

/// The input formats, as told apart by content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileFormat {
    /// `root;…;leaf count` lines (Brendan Gregg's folded format).
    Folded,
    /// async-profiler HTML v2.0–2.7: `f(level,left,width,type,'title')`, 5-colour palette.
    AsyncProfilerHtmlV2,
    /// async-profiler HTML v2.8–2.10: same calls, 7-colour palette.
    AsyncProfilerHtmlV28,
    /// async-profiler HTML v3.0–v4.x: prefix-compressed `cpool` and `f/u/n` calls.
    AsyncProfilerHtmlV3,
    /// `perf script` text, collapsed with inferno.
    PerfScript,
    /// speedscope JSON.
    Speedscope,
    /// DTrace stack aggregation output, collapsed with inferno.
    Dtrace,
    /// Go pprof (gzipped `profile.proto`).
    Pprof,
    /// JFR execution samples (`jdk.ExecutionSample`).
    Jfr,
    /// Chrome trace events (py-spy `--format chrometrace`).
    ChromeTrace,
}

impl ProfileFormat {
    /// Every profile format `build` reads, for what walks them all
    /// (`tests/record_layouts.rs`). A format added to the enum does not
    /// compile until [`Self::index`] places it, and the test
    /// `every_profile_format_is_listed_once` fails until it is listed here.
    pub const ALL: [ProfileFormat; 10] = [
        ProfileFormat::Folded,
        ProfileFormat::AsyncProfilerHtmlV2,
        ProfileFormat::AsyncProfilerHtmlV28,
        ProfileFormat::AsyncProfilerHtmlV3,
        ProfileFormat::PerfScript,
        ProfileFormat::Speedscope,
        ProfileFormat::Dtrace,
        ProfileFormat::Pprof,
        ProfileFormat::Jfr,
        ProfileFormat::ChromeTrace,
    ];

    /// Where the format is in [`Self::ALL`] (an exhaustive match: see there).
    pub const fn index(self) -> usize {
        match self {
            ProfileFormat::Folded => 0,
            ProfileFormat::AsyncProfilerHtmlV2 => 1,
            ProfileFormat::AsyncProfilerHtmlV28 => 2,
            ProfileFormat::AsyncProfilerHtmlV3 => 3,
            ProfileFormat::PerfScript => 4,
            ProfileFormat::Speedscope => 5,
            ProfileFormat::Dtrace => 6,
            ProfileFormat::Pprof => 7,
            ProfileFormat::Jfr => 8,
            ProfileFormat::ChromeTrace => 9,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            ProfileFormat::Folded => "folded stacks",
            ProfileFormat::AsyncProfilerHtmlV2 => "async-profiler HTML (v2.0–2.7)",
            ProfileFormat::AsyncProfilerHtmlV28 => "async-profiler HTML (v2.8–2.10)",
            ProfileFormat::AsyncProfilerHtmlV3 => "async-profiler HTML (v3/v4)",
            ProfileFormat::PerfScript => "perf script",
            ProfileFormat::Speedscope => "speedscope JSON",
            ProfileFormat::Dtrace => "DTrace stacks",
            ProfileFormat::Pprof => "Go pprof",
            ProfileFormat::Jfr => "JFR execution samples",
            ProfileFormat::ChromeTrace => "Chrome trace (py-spy chrometrace)",
        }
    }
}

impl Profile {
    /// An empty profile of the given kind and format.
    pub fn empty(kind: &str, format: ProfileFormat) -> Profile {
        Profile {
            kind: kind.to_string(),
            format,
            units: "samples".to_string(),
            samples: None,
            stacks: BTreeMap::new(),
            total: 0.0,
            root_self: 0.0,
            skipped: 0,
            warnings: Vec::new(),
        }
    }

    /// Adds weight to a stack; empty stacks count as root self-weight.
    /// Non-finite and non-positive weights are ignored (they carry no width).
    pub fn add(&mut self, stack: &str, weight: f64) {
        if !(weight.is_finite() && weight > 0.0) {
            return;
        }
        if stack.is_empty() {
            self.root_self += weight;
        } else if let Some(w) = self.stacks.get_mut(stack) {
            *w += weight;
        } else {
            self.stacks.insert(Stack::from(stack), weight);
        }
        self.total += weight;
    }

    /// The sum of the stacks' weights (total minus the root's own weight).
    pub fn stacks_total(&self) -> f64 {
        self.stacks.values().sum()
    }

    /// Whether any weight has a fractional part (inferno draws integers).
    pub fn has_fractional_weights(&self) -> bool {
        self.stacks.values().any(|w| w.fract() != 0.0)
    }

    /// Whether the weights are sample counts.
    pub fn weights_are_samples(&self) -> bool {
        self.units == "samples"
    }

    /// Sets [`samples`](Self::samples) to the total weight, for formats
    /// whose weights are sample counts.
    fn count_weights_as_samples(&mut self) {
        if self.weights_are_samples() {
            self.samples = Some(self.total.round() as u64);
        }
    }

    /// The total weight rounded in its unit, e.g. `2,016 samples` or
    /// `20.16 seconds`.
    pub fn total_text(&self) -> String {
        format!("{} {}", format_weight(self.total), self.units)
    }
}

/// A weight rounded for people: whole numbers with thousands separators,
/// others to 2 decimals below 100 and to whole units from 100 on (py-spy's
/// speedscope weights add up to `13.269999999999762` seconds).
pub fn format_weight(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let rounded = if value.fract() == 0.0 || value.abs() >= 100.0 {
        value.round()
    } else {
        let r = (value * 100.0).round() / 100.0;
        if r.fract() != 0.0 {
            return format!("{r:.2}");
        }
        r
    };
    if rounded.abs() >= 1e15 {
        return format!("{rounded:.0}");
    }
    let digits = format!("{}", rounded.abs() as u64);
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if rounded < 0.0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Name parts that describe a format, not a kind: `flame.collapsed.txt` and
/// `flame.speedscope.json` are cpu profiles.
const FORMAT_WORDS: &[&str] = &[
    "collapsed",
    "folded",
    "stacks",
    "txt",
    "html",
    "htm",
    "json",
    "speedscope",
    "perf",
    "script",
    "raw",
    "out",
    "svg",
    "gz",
    // Profilers named in a file name are not kinds either (`flame-pyspy.txt`).
    "pyspy",
    "austin",
    "async",
    "inferno",
    "pb",
    "pprof",
    "prof",
    "jfr",
    "chrometrace",
    "trace",
];

/// The kind named by a profile file name, `None` when the name is not a
/// profile name. Any name starting with `flame` (`flamegraph`, `Flame-…`,
/// in any case) is a profile; its content decides the format. The kind
/// (lower-cased) is the word after `flame[graph].` when more follows
/// (`flame.alloc.html` → `alloc`), or after `flame[graph]-`/`_` when it is a
/// kind profilers record (`flamegraph-lock.txt` → `lock`); otherwise `cpu`
/// (`flame.html`, `flame.collapsed.txt`, `flames.txt`,
/// `flamegraph_v1.json`).
pub fn kind_from_file_name(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    // `flamegraph.html` is async-profiler's own default output name.
    let rest = lower
        .strip_prefix("flamegraph")
        .or_else(|| lower.strip_prefix("flame"))?;
    let canonical = rest.starts_with('.');
    let Some(rest) = rest.strip_prefix(['.', '-', '_']) else {
        return Some(DEFAULT_KIND.to_string());
    };
    // `flame.<ext>` or `flame.<kind>.<ext>`; the extension may itself hold a dot
    // (`flame.cpu.speedscope.json`), so the kind is the first part when more follow.
    let parts: Vec<&str> = rest.split(['.', '-', '_']).collect();
    let kind = match parts.as_slice() {
        // The documented `flame.<kind>.<ext>` takes any kind; other names
        // (`flamegraph_v1.json`, `flame-2026-11-27.txt`) only a kind profilers
        // record, so a version or a date is not taken for one.
        [kind, _, ..]
            if !FORMAT_WORDS.contains(kind)
                && is_kind(kind)
                && (canonical || KNOWN_KINDS.contains(kind)) =>
        {
            kind
        }
        _ => DEFAULT_KIND,
    };
    Some(kind.to_string())
}

/// Kinds profilers record (async-profiler events, perf, Go pprof), taken
/// from names other than `flame.<kind>.<ext>`.
const KNOWN_KINDS: &[&str] = &[
    "cpu",
    "alloc",
    "lock",
    "wall",
    "itimer",
    "ctimer",
    "cycles",
    "heap",
    "mem",
    "memory",
    "offcpu",
    "block",
    "mutex",
    "goroutine",
    "io",
];

/// A kind: lower-case letters, digits, `-` and `_`, starting with a letter,
/// at most 32 characters.
fn is_kind(word: &str) -> bool {
    !word.is_empty()
        && word.len() <= 32
        && word.as_bytes()[0].is_ascii_lowercase()
        && word
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// How surely a file's first bytes are a profile ([`sniff`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Likeness {
    /// Markup or JSON only a profiler writes (speedscope JSON, an
    /// async-profiler or other HTML page, an SVG flame graph).
    Certain,
    /// Text that reads as a profile (folded stacks, perf script, DTrace
    /// stacks) but could be something else: ask the result sniffer first.
    Plausible,
}

/// Tells from the first bytes of a file (gzip already inflated, as
/// `ingest::raw::io::head` gives them) whether it is a flame-graph profile,
/// by content only, like the result sniffer does for load-test outputs.
pub fn sniff(head: &[u8]) -> Option<Likeness> {
    if head.starts_with(jfr::MAGIC) {
        return Some(Likeness::Certain);
    }
    if is_binary(head) {
        // A whole pprof profile is usually a few KiB: the head holds it.
        return pprof::decode(head).map(|_| Likeness::Certain);
    }
    let decoded = text::decode(head);
    let text = decoded.text.as_ref();
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return None;
    }
    let window = |n: usize| -> String {
        trimmed
            .chars()
            .take(n)
            .collect::<String>()
            .to_ascii_lowercase()
    };
    if trimmed.starts_with('[') {
        let end = trimmed
            .char_indices()
            .nth(64 * 1024)
            .map_or(trimmed.len(), |(i, _)| i);
        return chrometrace::looks_like(&trimmed[..end]).then_some(Likeness::Certain);
    }
    if trimmed.starts_with('{') {
        let head = window(64 * 1024);
        let speedscope = head.contains("speedscope.app/file-format-schema")
            || (head.contains("\"profiles\"") && head.contains("\"shared\""));
        return speedscope.then_some(Likeness::Certain);
    }
    if trimmed.starts_with('<') {
        let head = window(64 * 1024);
        let first_line_folded = trimmed
            .lines()
            .next()
            .and_then(folded::parse_line)
            .is_some();
        if !first_line_folded {
            if crate::lookalike::recognise(trimmed.as_bytes()).is_some() && !is_flame_html(&head) {
                return None;
            }
            let flame = head.contains("function f(")
                || head.contains("const cpool")
                || head.contains("<svg")
                || ((head.contains("<html") || head.contains("<!doctype html"))
                    && !head.contains("<testresults"));
            return flame.then_some(Likeness::Certain);
        }
    }
    if perf::looks_like_perf_script(text) || perf::looks_like_dtrace(text) {
        return Some(Likeness::Plausible);
    }
    // Folded stacks: most of the first lines are `stack count` (a cut-off
    // last line of the head does not count).
    let mut lines = 0usize;
    let mut folded_lines = 0usize;
    let complete = match text.rfind('\n') {
        Some(end) if head.len() >= 64 * 1024 => &text[..end],
        _ => text,
    };
    for line in complete.lines().take(200) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with("//") {
            continue;
        }
        lines += 1;
        if folded::parse_line(line).is_some() {
            folded_lines += 1;
        }
    }
    (lines > 0 && folded_lines * 10 >= lines * 9).then_some(Likeness::Plausible)
}

/// Reads one profile file's bytes, telling the format apart by content. The
/// kind comes from the file name (`flame[.<kind>].<ext>`, default `cpu`);
/// `path` is used for the kind and in messages.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Profile, Error> {
    let kind = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(kind_from_file_name)
        .unwrap_or_else(|| DEFAULT_KIND.to_string());
    let inflated;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        inflated = gunzip(bytes, path)?;
        inflated.as_slice()
    } else {
        bytes
    };
    if bytes.starts_with(jfr::MAGIC) {
        return jfr::parse(bytes, path, &kind);
    }
    if is_binary(bytes) {
        if let Some(p) = pprof::decode(bytes) {
            return pprof::parse(&p, path, &kind);
        }
        return Err(Error::at(
            path,
            None,
            crate::lookalike::recognise(bytes).map_or_else(
                || {
                    "binary content that is no profile perfdash reads (Go pprof, JFR) nor text"
                        .to_string()
                },
                |advice| advice.to_string(),
            ),
        ));
    }
    let decoded = text::decode(bytes);
    let input = decoded.text.as_ref();
    let head = &input.as_bytes()[..input.len().min(256 * 1024)];
    if let Some(advice) = crate::lookalike::recognise(head)
        && !is_flame_html(
            &String::from_utf8_lossy(&head[..head.len().min(64 * 1024)]).to_ascii_lowercase(),
        )
    {
        return Err(Error::at(path, None, format!("not a profile: {advice}")));
    }
    if let Some(result) = input
        .lines()
        .next()
        .and_then(crate::lookalike::load_test_result)
    {
        return Err(Error::at(
            path,
            Some(1),
            format!(
                "not a profile: {result}, a load-test result; name it round-<n>.<ext> to have it \
                 read as one (docs/raw-results.md)"
            ),
        ));
    }
    let mut profile = match detect(input) {
        Detected::Empty => {
            let mut p = Profile::empty(&kind, ProfileFormat::Folded);
            p.warnings.push("empty profile: no samples".to_string());
            p
        }
        Detected::Json => speedscope::parse(input, path, &kind)?,
        Detected::ChromeTrace => chrometrace::parse(input, path, &kind)?,
        Detected::Html => html::parse(input, path, &kind)?,
        Detected::Svg => {
            return Err(Error::at(
                path,
                None,
                "an SVG flame graph cannot be read back reliably; archive the folded stacks, \
                 the async-profiler HTML or the perf script output instead",
            ));
        }
        Detected::Perf => perf::parse(input, path, &kind)?,
        Detected::Dtrace => perf::parse_dtrace(input, path, &kind)?,
        Detected::Folded => folded::parse_folded(input, path, &kind)?,
    };
    if let Some(w) = decoded.warning {
        profile.warnings.insert(0, w);
    }
    Ok(profile)
}

/// Whether bytes are binary rather than text: a NUL or invalid UTF-8 near
/// the start (UTF-16 text with its byte-order mark is text).
fn is_binary(bytes: &[u8]) -> bool {
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return false;
    }
    let n = bytes.len().min(512);
    bytes[..n].contains(&0)
        || match std::str::from_utf8(&bytes[..n]) {
            Ok(_) => false,
            // A character cut at the window's end is still text.
            Err(e) => e.error_len().is_some(),
        }
}

/// Whether lower-cased HTML is a flame graph page (async-profiler's calls).
fn is_flame_html(lower: &str) -> bool {
    lower.contains("function f(") || lower.contains("const cpool")
}

/// What a profile's first bytes are, for messages: "a Go pprof", "a JFR", …
pub fn describe_head(head: &[u8]) -> &'static str {
    if head.starts_with(jfr::MAGIC) {
        "a JFR"
    } else if is_binary(head) {
        "a Go pprof"
    } else if head.trim_ascii_start().starts_with(b"[") {
        "a Chrome trace"
    } else if head.trim_ascii_start().starts_with(b"{") {
        "a speedscope"
    } else {
        "a flame-graph"
    }
}

/// Decompressed profiles larger than this are refused (a gzip bomb must not
/// exhaust memory; real folded profiles are a few MB).
pub const MAX_INFLATED_BYTES: u64 = 256 * 1024 * 1024;

/// Gzipped profiles (`perf script | gzip`, FlameGraph's example) are read as
/// their content.
fn gunzip(bytes: &[u8], path: &Path) -> Result<Vec<u8>, Error> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .take(MAX_INFLATED_BYTES + 1)
        .read_to_end(&mut out)
        .map_err(|e| Error::at(path, None, format!("gzip data could not be read: {e}")))?;
    if out.len() as u64 > MAX_INFLATED_BYTES {
        return Err(Error::at(
            path,
            None,
            format!(
                "decompressed profile exceeds {} MiB; refused",
                MAX_INFLATED_BYTES / (1024 * 1024)
            ),
        ));
    }
    Ok(out)
}

enum Detected {
    Empty,
    Json,
    ChromeTrace,
    Html,
    Svg,
    Perf,
    Dtrace,
    Folded,
}

fn detect(text: &str) -> Detected {
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return Detected::Empty;
    }
    // Folded frames may start with `{` (Rust `{{closure}}`) or `<` (py-spy's
    // `<module>`, C++ `<lambda>`), so a first character alone decides nothing.
    if trimmed.starts_with('{') && serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok() {
        return Detected::Json;
    }
    if trimmed.starts_with('[')
        && chrometrace::looks_like(
            &trimmed[..trimmed
                .char_indices()
                .nth(64 * 1024)
                .map_or(trimmed.len(), |(i, _)| i)],
        )
    {
        return Detected::ChromeTrace;
    }
    if trimmed.starts_with('<') {
        let head: String = trimmed
            .chars()
            .take(4096)
            .collect::<String>()
            .to_ascii_lowercase();
        let first_line_folded = trimmed
            .lines()
            .next()
            .and_then(folded::parse_line)
            .is_some();
        if head.contains("<svg") && !head.contains("<html") && !first_line_folded {
            return Detected::Svg;
        }
        if head.contains("<html")
            || head.contains("<!doctype")
            || head.contains("<script")
            || !first_line_folded
        {
            return Detected::Html;
        }
    }
    if perf::looks_like_perf_script(text) {
        return Detected::Perf;
    }
    if perf::looks_like_dtrace(text) {
        return Detected::Dtrace;
    }
    Detected::Folded
}

#[cfg(test)]
mod tests;

/// What `perfdash inspect` shows for a profile file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileSummary {
    /// The path as given.
    pub path: String,
    pub kind: String,
    pub format: ProfileFormat,
    pub units: String,
    /// All weight, including the root's own (the page's own total for HTML).
    pub total: f64,
    /// How many samples the profile holds; `None` when the format does not say.
    pub samples: Option<u64>,
    pub root_self: f64,
    /// Distinct stacks.
    pub stacks: usize,
    /// Invalid lines or records skipped.
    pub skipped: usize,
    pub warnings: Vec<String>,
    /// Category → percent of `total`.
    pub shares: BTreeMap<Category, f64>,
    /// Percent of `total` that is idle (threads waiting for work).
    pub idle_pct: f64,
    /// Category → percent of the busy weight (idle left out unless
    /// `[profiles] exclude_idle = false`).
    pub busy_shares: BTreeMap<Category, f64>,
    pub gc_in_mutator_pct: f64,
    /// How frame names were normalised for `top_frames`.
    pub normalisation: Normalisation,
    /// The busy frames with the largest self share: (frame, percent of the
    /// busy weight), names normalised.
    pub top_frames: Vec<(String, f64)>,
}

/// How many frames [`ProfileSummary::top_frames`] lists.
pub const TOP_FRAMES: usize = 10;

/// Reads and classifies one profile for `perfdash inspect`: total samples
/// and category shares (with the archive's `[profiles]` settings, or the
/// defaults).
pub fn inspect_profile(
    bytes: &[u8],
    path: &Path,
    settings: &crate::config::ProfileSettings,
) -> Result<ProfileSummary, Error> {
    let profile = parse(bytes, path)?;
    let classifier =
        Classifier::new(settings).map_err(|e| Error::Usage(format!("profiles: {e}")))?;
    let shares = classifier.shares(&profile);
    let busy = compare::Comparable::new(&profile, &classifier, classifier.normalisation());
    let mut leaves: BTreeMap<&str, f64> = BTreeMap::new();
    for (stack, w) in &busy.stacks {
        let leaf = stack.rsplit(';').next().unwrap_or(stack);
        *leaves.entry(leaf).or_insert(0.0) += w;
    }
    let mut top: Vec<(String, f64)> = leaves
        .into_iter()
        .map(|(f, w)| {
            (
                f.to_string(),
                if busy.total > 0.0 {
                    100.0 * w / busy.total
                } else {
                    0.0
                },
            )
        })
        .collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(TOP_FRAMES);
    Ok(ProfileSummary {
        path: path.display().to_string(),
        kind: profile.kind.clone(),
        format: profile.format,
        units: profile.units.clone(),
        total: profile.total,
        samples: profile.samples,
        root_self: profile.root_self,
        stacks: profile.stacks.len(),
        skipped: profile.skipped,
        warnings: profile.warnings.clone(),
        shares: shares.shares.iter().copied().collect(),
        idle_pct: shares.idle_pct(),
        busy_shares: shares.busy_shares.iter().copied().collect(),
        gc_in_mutator_pct: shares.gc_in_mutator_pct,
        normalisation: classifier.normalisation(),
        top_frames: top,
    })
}

impl ProfileSummary {
    /// A plain-text report for the terminal. Text from the file (its
    /// path, kind, units, frames, warnings) is escaped for the terminal
    /// (`escape::terminal`): a frame name cannot start a line of its own.
    pub fn to_table(&self) -> String {
        use crate::escape::terminal;
        use std::fmt::Write;
        let mut out = String::new();
        let units = terminal(&self.units);
        let _ = writeln!(
            out,
            "{}  ({} profile, {})",
            terminal(&self.path),
            terminal(&self.kind),
            self.format.describe()
        );
        let samples = match self.samples {
            Some(n) if self.units != "samples" => {
                format!(
                    " in {} sample{}",
                    format_weight(n as f64),
                    if n == 1 { "" } else { "s" }
                )
            }
            None => " (no sample count in this format)".to_string(),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  total {} {}{samples}, {} stack{}{}",
            format_weight(self.total),
            units,
            format_weight(self.stacks as f64),
            if self.stacks == 1 { "" } else { "s" },
            if self.root_self > 0.0 {
                format!(
                    " ({} {} with an empty stack)",
                    format_weight(self.root_self),
                    if self.units == "samples" && self.root_self == 1.0 {
                        "sample"
                    } else {
                        &units
                    }
                )
            } else {
                String::new()
            }
        );
        let excluded = self.busy_shares.len() < self.shares.len();
        if excluded {
            let _ = writeln!(
                out,
                "  idle (waiting for work): {:.1}% of the total, left out of the shares below",
                self.idle_pct
            );
        }
        let _ = writeln!(
            out,
            "  share of the {}time:",
            if excluded { "busy " } else { "" }
        );
        for (category, pct) in &self.busy_shares {
            let _ = writeln!(out, "  {:<14} {:>6.1}%", category.label(), pct);
        }
        if self.gc_in_mutator_pct > 0.0 {
            let _ = writeln!(
                out,
                "  (GC work inside application threads: {:.1}% of the total)",
                self.gc_in_mutator_pct
            );
        }
        if !self.top_frames.is_empty() {
            let _ = writeln!(
                out,
                "  hottest {}frames (self, {}):",
                if excluded { "busy " } else { "" },
                match self.normalisation {
                    Normalisation::Functions => "by function",
                    Normalisation::Lines => "as written",
                }
            );
            for (frame, pct) in &self.top_frames {
                let _ = writeln!(out, "    {pct:>6.1}%  {}", terminal(frame));
            }
        }
        if self.skipped > 0 {
            let _ = writeln!(out, "  {} invalid lines skipped", self.skipped);
        }
        for w in &self.warnings {
            let _ = writeln!(out, "  warning: {}", terminal(w));
        }
        out
    }
}
