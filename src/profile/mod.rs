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
//! * DTrace stack aggregations, collapsed with inferno.

pub mod classify;
pub mod compare;
mod folded;
mod html;
mod perf;
mod speedscope;
mod text;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::error::Error;

pub use classify::{Category, CategoryShares, Classifier};
pub use compare::{FrameGrowth, grown_frames};
pub use folded::parse_folded;
pub use perf::{PerfOptions, collapse_dtrace, collapse_perf};

/// The profile kind assumed when a file name carries none (`flame.html`).
pub const DEFAULT_KIND: &str = "cpu";

/// One profile: weights per distinct stack.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    /// `cpu`, `alloc`, `lock`, `wall`, … from `flame[.<kind>].<ext>`.
    pub kind: String,
    /// Which format the file was recognised as.
    pub format: ProfileFormat,
    /// What the weights count: `samples` unless the input says otherwise
    /// (async-profiler v4 `units`, speedscope `unit`).
    pub units: String,
    /// Folded stack `root;…;leaf` → weight (samples, bytes, ns, …).
    pub stacks: BTreeMap<String, f64>,
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
}

impl ProfileFormat {
    pub fn describe(self) -> &'static str {
        match self {
            ProfileFormat::Folded => "folded stacks",
            ProfileFormat::AsyncProfilerHtmlV2 => "async-profiler HTML (v2.0–2.7)",
            ProfileFormat::AsyncProfilerHtmlV28 => "async-profiler HTML (v2.8–2.10)",
            ProfileFormat::AsyncProfilerHtmlV3 => "async-profiler HTML (v3/v4)",
            ProfileFormat::PerfScript => "perf script",
            ProfileFormat::Speedscope => "speedscope JSON",
            ProfileFormat::Dtrace => "DTrace stacks",
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
            self.stacks.insert(stack.to_string(), weight);
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
];

/// The kind named by a profile file name `flame[.<kind>].<ext>` (or
/// `flamegraph[.<kind>].<ext>`): `flame.alloc.html` → `alloc`, `flame.html` →
/// `cpu`. `None` when the name is not a profile name.
pub fn kind_from_file_name(name: &str) -> Option<String> {
    // `flamegraph.html` is async-profiler's own default output name.
    let rest = name
        .strip_prefix("flamegraph")
        .or_else(|| name.strip_prefix("flame"))?;
    if rest.is_empty() {
        return Some(DEFAULT_KIND.to_string());
    }
    let rest = rest.strip_prefix('.')?;
    // `flame.<ext>` or `flame.<kind>.<ext>`; the extension may itself hold a dot
    // (`flame.cpu.speedscope.json`), so the kind is the first part when more follow.
    let parts: Vec<&str> = rest.split('.').collect();
    let kind = match parts.as_slice() {
        [kind, _, ..] if !FORMAT_WORDS.contains(kind) => kind,
        _ => DEFAULT_KIND,
    };
    let valid = !kind.is_empty()
        && kind.len() <= 32
        && kind
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    valid.then(|| kind.to_string())
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
    let decoded = text::decode(bytes);
    let input = decoded.text.as_ref();
    let mut profile = match detect(input) {
        Detected::Empty => {
            let mut p = Profile::empty(&kind, ProfileFormat::Folded);
            p.warnings.push("empty profile: no samples".to_string());
            p
        }
        Detected::Json => speedscope::parse(input, path, &kind)?,
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
    if trimmed.starts_with('{') {
        return Detected::Json;
    }
    if trimmed.starts_with('<') {
        let head: String = trimmed
            .chars()
            .take(4096)
            .collect::<String>()
            .to_ascii_lowercase();
        if head.contains("<svg") && !head.contains("<html") {
            return Detected::Svg;
        }
        return Detected::Html;
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
    pub root_self: f64,
    /// Distinct stacks.
    pub stacks: usize,
    /// Invalid lines or records skipped.
    pub skipped: usize,
    pub warnings: Vec<String>,
    /// Category → percent of `total`.
    pub shares: BTreeMap<Category, f64>,
    pub gc_in_mutator_pct: f64,
    /// The frames with the largest self share: (frame, percent of `total`).
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
    let mut leaves: BTreeMap<&str, f64> = BTreeMap::new();
    for (stack, w) in &profile.stacks {
        let leaf = stack.rsplit(';').next().unwrap_or(stack);
        *leaves
            .entry(classify::strip_annotation(leaf))
            .or_insert(0.0) += w;
    }
    let mut top: Vec<(String, f64)> = leaves
        .into_iter()
        .map(|(f, w)| {
            (
                f.to_string(),
                if profile.total > 0.0 {
                    100.0 * w / profile.total
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
        root_self: profile.root_self,
        stacks: profile.stacks.len(),
        skipped: profile.skipped,
        warnings: profile.warnings.clone(),
        shares: shares.shares.iter().copied().collect(),
        gc_in_mutator_pct: shares.gc_in_mutator_pct,
        top_frames: top,
    })
}

impl ProfileSummary {
    /// A plain-text report for the terminal.
    pub fn to_table(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}  ({} profile, {})",
            self.path,
            self.kind,
            self.format.describe()
        );
        let _ = writeln!(
            out,
            "  total {} {} in {} stacks{}",
            self.total,
            self.units,
            self.stacks,
            if self.root_self > 0.0 {
                format!(" ({} with an empty stack)", self.root_self)
            } else {
                String::new()
            }
        );
        for (category, pct) in &self.shares {
            let _ = writeln!(out, "  {:<14} {:>6.1}%", category.label(), pct);
        }
        if self.gc_in_mutator_pct > 0.0 {
            let _ = writeln!(
                out,
                "  (GC work inside application threads: {:.1}%)",
                self.gc_in_mutator_pct
            );
        }
        if !self.top_frames.is_empty() {
            let _ = writeln!(out, "  hottest frames (self):");
            for (frame, pct) in &self.top_frames {
                let _ = writeln!(out, "    {pct:>6.1}%  {frame}");
            }
        }
        if self.skipped > 0 {
            let _ = writeln!(out, "  {} invalid lines skipped", self.skipped);
        }
        for w in &self.warnings {
            let _ = writeln!(out, "  warning: {w}");
        }
        out
    }
}
