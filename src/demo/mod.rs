//! The bundled sample archive and its generator (`perfdash demo`).
//!
//! [`generate`] writes a complete archive in the documented layout: the
//! history of an order/inventory service with 12 endpoints, load-tested
//! three times a week (Mon/Wed/Fri) with 5 rounds per endpoint, each round a
//! k6 `handleSummary()` data object as k6 v1.x writes it. The data carries
//! the noise real runs have (run-to-run drift, round-to-round noise, GC-tail
//! rounds near 2× p99, warm-up in round 1, noisy-neighbour runs) and a few
//! injected events (regressions that persist until fixed, an improvement,
//! an accepted change); see `docs/archive.md` for the list and
//! [`DemoReport::events`] for where they landed.
//!
//! Alongside the runs it writes triage labels (`triage/*.toml`), chosen
//! from the story alone (what was injected where, and what the default
//! rules make of it by the generator's own baseline walk) — never by
//! running the analysis on the files it wrote, so that the tests comparing
//! perfdash's alarms with the labels check something. And CPU flame graphs
//! (`flame.cpu.collapsed`) for the regressed runs, the runs just before
//! them and every release run.
//!
//! Deterministic: the same options give byte-identical files on every
//! machine (own PRNG without libm functions, sorted maps, fixed formatting).

mod annotations;
pub mod facts;
mod flame;
mod rng;
mod steps;
mod story;
mod summary;

use std::fmt;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Datelike, Days, NaiveDate, NaiveTime, Utc, Weekday};

use crate::analyse::baseline::{RunInput, SeriesWalk};
use crate::analyse::figures::RunFigures;
use crate::analyse::verdict::{self, Verdict};
use crate::calendar;
use crate::config::Settings;
use crate::error::Error;
use crate::model::{Label, TriageLabel};
use crate::stats::median;
use rng::Rng;
use story::{ENDPOINTS, EVENTS, EndpointDef, EventDef, RELEASES};
use summary::RoundFigures;

pub use story::EventKind;

/// What to generate. [`Default`] gives the bundled `archive/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoOptions {
    /// Seeds every random draw; the same seed gives the same bytes.
    pub seed: u64,
    /// The history starts on the first Monday on or after this date.
    pub start: NaiveDate,
    /// Weeks of history, three runs each (Monday, Wednesday, Friday).
    pub weeks: u32,
    /// Measured rounds per endpoint per run.
    pub rounds: u32,
    /// Write flame-graph profiles (`flame.cpu.collapsed`).
    pub profiles: bool,
    /// How many endpoints: the story's 12, and beyond that copies of them
    /// (`order-list-2`, …) with their own noise and the same events, for
    /// benchmarks at scale (see `demo_endpoints`).
    pub endpoints: usize,
}

/// The bundled archive's first day and length: its history ends in the
/// week of 2026-11-23, before the day it was first generated.
const BUNDLED_START: (i32, u32, u32) = (2026, 6, 1);
const BUNDLED_WEEKS: u32 = 26;

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            seed: DEFAULT_SEED,
            start: bundled_start(),
            weeks: BUNDLED_WEEKS,
            rounds: 5,
            profiles: true,
            endpoints: ENDPOINTS.len(),
        }
    }
}

fn bundled_start() -> NaiveDate {
    let (y, m, d) = BUNDLED_START;
    NaiveDate::from_ymd_opt(y, m, d).expect("a valid date")
}

impl DemoOptions {
    /// A history of `weeks` weeks that ends in the week the bundled
    /// archive ends (a fixed, past date), so that any length is dated
    /// before today: a history running past the files' time would have its
    /// newest runs taken for a clock set ahead (time trust) and never be
    /// "the latest". A fixed end, rather than "now", keeps the same
    /// options giving the same bytes on any day. 26 weeks is the bundled
    /// archive itself.
    pub fn with_weeks_ending_like_bundled(self, weeks: u32) -> DemoOptions {
        let shift = 7 * (i64::from(weeks) - i64::from(BUNDLED_WEEKS));
        DemoOptions {
            start: bundled_start() - chrono::Duration::days(shift),
            weeks,
            ..self
        }
    }
}

/// One endpoint of a generated archive: one of the story's, or a copy of
/// one (copy 2, 3, …) under its own id, with its own random draws and the
/// same events as its original.
#[derive(Debug, Clone)]
struct DemoEndpoint {
    def: &'static EndpointDef,
    id: String,
    name: String,
    /// `[endpoints.<id>] service`: set only beyond the story's 12
    /// endpoints, one service per copy of the story (`shop`, `shop-2`, …),
    /// so that archives at scale exercise the service pages while the
    /// bundled archive keeps its flat overview.
    service: Option<String>,
}

impl DemoEndpoint {
    /// The story's id, by which events, capacity runs and profiles name it.
    fn story_id(&self) -> &'static str {
        self.def.id
    }
}

/// `count` endpoints: the story's 12 in order, then copies round-robin
/// (`cancel-order-2`, `cart-checkout-2`, …, `cancel-order-3`, …).
fn demo_endpoints(count: usize) -> Vec<DemoEndpoint> {
    let grouped = count > ENDPOINTS.len();
    (0..count)
        .map(|i| {
            let def = &ENDPOINTS[i % ENDPOINTS.len()];
            let copy = i / ENDPOINTS.len() + 1;
            let service = grouped.then(|| match copy {
                1 => "shop".to_string(),
                n => format!("shop-{n}"),
            });
            if copy == 1 {
                DemoEndpoint {
                    def,
                    id: def.id.to_string(),
                    name: def.name.to_string(),
                    service,
                }
            } else {
                DemoEndpoint {
                    def,
                    id: format!("{}-{copy}", def.id),
                    name: format!("{} ({copy})", def.name),
                    service,
                }
            }
        })
        .collect()
}

/// The seed of the bundled archive.
pub const DEFAULT_SEED: u64 = 20_260_601;

/// What [`generate`] wrote.
#[derive(Debug, Clone)]
pub struct DemoReport {
    pub root: PathBuf,
    pub runs: usize,
    pub endpoints: usize,
    /// Files written and their total size in bytes.
    pub files: usize,
    pub bytes: u64,
    pub round_files: usize,
    pub profiles: usize,
    /// Step-load files (`steps.csv.gz`), one per capacity endpoint in
    /// every step-load run.
    pub step_files: usize,
    pub triage_labels: usize,
    /// The injected events, in time order.
    pub events: Vec<InjectedEvent>,
}

/// One injected event and where it landed.
#[derive(Debug, Clone, PartialEq)]
pub struct InjectedEvent {
    pub kind: EventKind,
    /// Endpoint ids it affects (all 12 for a noisy neighbour).
    pub endpoints: Vec<String>,
    /// The affected run ids, oldest first.
    pub runs: Vec<String>,
    /// Still going at the last run (not fixed).
    pub open: bool,
    /// Multiplier on p99 (1.6 = +60 %); for noise growth, on round noise;
    /// for slow drift, the level reached at the last run.
    pub magnitude: f64,
    /// The triage label its alarms get: `real`, `accepted` or `noise`.
    pub label: &'static str,
    pub note: String,
}

impl fmt::Display for DemoReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "wrote {}: {} runs × {} endpoints, {} files ({:.1} MB): {} round files, {} profiles, {} step-load files, {} triage labels",
            self.root.display(),
            self.runs,
            self.endpoints,
            self.files,
            self.bytes as f64 / 1e6,
            self.round_files,
            self.profiles,
            self.step_files,
            self.triage_labels
        )?;
        writeln!(f, "injected events:")?;
        for e in &self.events {
            let endpoints = if e.endpoints.len() == self.endpoints {
                "all endpoints".to_string()
            } else {
                e.endpoints.join(", ")
            };
            let span = match (e.runs.first(), e.runs.last()) {
                (Some(a), Some(b)) if a == b => a.clone(),
                (Some(a), Some(b)) => format!("{a} .. {b}{}", if e.open { " (open)" } else { "" }),
                _ => String::new(),
            };
            writeln!(
                f,
                "  {:<16} ×{:<5} {:<18} {} ({} runs) [{}]",
                e.kind.as_str(),
                e.magnitude,
                endpoints,
                span,
                e.runs.len(),
                e.label
            )?;
        }
        Ok(())
    }
}

/// Writes the demo archive into `out`, which must not exist or be empty
/// (perfdash never overwrites an archive).
pub fn generate(out: &Path, opts: &DemoOptions) -> Result<DemoReport, Error> {
    if opts.weeks == 0 || opts.rounds == 0 || opts.endpoints == 0 {
        return Err(Error::Usage(
            "demo: weeks, rounds and endpoints must be at least 1".into(),
        ));
    }
    match std::fs::read_dir(out) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(Error::Usage(format!(
                    "{} is not empty: the demo archive is written only into a new or empty folder",
                    out.display()
                )));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(out, e)),
    }
    let plan = plan(opts);
    let mut w = Writer {
        root: out.to_path_buf(),
        files: 0,
        bytes: 0,
    };
    w.write("README.md", README.as_bytes())?;
    w.write(
        crate::config::SETTINGS_FILE,
        settings_toml(&plan.endpoints).as_bytes(),
    )?;
    let mut round_files = 0;
    let mut profiles = 0;
    let mut step_files = 0;
    for run in &plan.runs {
        w.write(
            &format!("runs/{}/run.toml", run.id),
            run_toml(run).as_bytes(),
        )?;
        for (demo, ep) in plan.endpoints.iter().zip(&run.endpoints) {
            let def = demo.def;
            for (i, figures) in ep.rounds.iter().enumerate() {
                let mut rng = Rng::derive(
                    opts.seed,
                    "summary",
                    run.index as u64,
                    (ep.index * 100 + i) as u64,
                );
                let bytes = summary::render(def, figures, &mut rng);
                w.write(
                    &format!("runs/{}/{}/round-{}.json", run.id, demo.id, i + 1),
                    &bytes,
                )?;
                round_files += 1;
            }
            if let Some(profile) = &ep.profile {
                w.write(
                    &format!("runs/{}/{}/flame.cpu.collapsed", run.id, demo.id),
                    profile.as_bytes(),
                )?;
                profiles += 1;
            }
        }
        if steps::is_step_run(run.index) {
            step_files += write_step_load(&mut w, opts, run)?;
        }
    }
    let labels = triage_labels(&plan);
    for label in &labels {
        w.write(&label_file(label), label_toml(label).as_bytes())?;
    }
    if let Some(text) = annotations::annotations_toml(&plan) {
        w.write(annotations::ANNOTATIONS_FILE, text.as_bytes())?;
    }
    Ok(DemoReport {
        root: out.to_path_buf(),
        runs: plan.runs.len(),
        endpoints: plan.endpoints.len(),
        files: w.files,
        bytes: w.bytes,
        round_files,
        profiles,
        step_files,
        triage_labels: labels.len(),
        events: plan.events,
    })
}

/// The events [`generate`] injects with these options and where they
/// land, without writing anything (the expectations of tests that read the
/// bundled archive).
pub fn injected_events(opts: &DemoOptions) -> Vec<InjectedEvent> {
    let opts = DemoOptions {
        profiles: false,
        ..opts.clone()
    };
    plan(&opts).events
}

const README: &str = "\
# perfdash demo archive

Generated by `perfdash demo` (library: `perfdash::demo::generate`) with a
fixed seed; regenerate it byte for byte instead of editing it. What was
injected where is described in docs/archive.md (\"The bundled demo archive\").

- `perfdash.toml`: endpoint display names
- `runs/<run-id>/run.toml`: run time, commit, branch, release, notes, host
- `annotations/events.toml`: incidents and config changes, drawn on the charts
- `runs/<run-id>/<endpoint>/round-<n>.json`: k6 handleSummary() data per round
- `runs/<run-id>/<endpoint>/flame.cpu.collapsed`: 30 s CPU profile (async-profiler collapsed)
- `runs/<run-id>/<endpoint>/steps.csv.gz`: a JMeter step-load round (every other Friday, 3 endpoints)
- `runs/<run-id>/<endpoint>/resources.csv`: host CPU and memory during the step-load round
- `triage/<run-id>--<endpoint>.toml`: a human's label for an alarm
";

/// Writes one run's step-load files and resource readings; returns how
/// many step-load files it wrote.
fn write_step_load(w: &mut Writer, opts: &DemoOptions, run: &RunPlan) -> Result<usize, Error> {
    // After the load-test rounds: 70 minutes past the run's start.
    let start_ms = run.started_at.timestamp_millis() + 70 * 60 * 1000;
    let mut written = 0;
    for (i, def) in steps::CAPACITY.iter().enumerate() {
        let dropped = def.drop.is_some_and(|(release, _)| {
            RELEASES
                .iter()
                .find(|(_, _, v)| *v == release)
                .is_some_and(|&(week, slot, _)| run.index >= run_index(week, slot))
        });
        let capacity = def.capacity_rps
            * if dropped {
                def.drop.map_or(1.0, |d| d.1)
            } else {
                1.0
            };
        let mut rng = Rng::derive(opts.seed, "steps", run.index as u64, i as u64);
        let (bytes, utilisation) = steps::render(def, capacity, run.index, start_ms, &mut rng);
        w.write(
            &format!("runs/{}/{}/steps.csv.gz", run.id, def.endpoint),
            &bytes,
        )?;
        w.write(
            &format!("runs/{}/{}/resources.csv", run.id, def.endpoint),
            steps::resources(start_ms, &utilisation, &mut rng).as_bytes(),
        )?;
        written += 1;
    }
    Ok(written)
}

struct Writer {
    root: PathBuf,
    files: usize,
    bytes: u64,
}

impl Writer {
    fn write(&mut self, rel: &str, bytes: &[u8]) -> Result<(), Error> {
        let path = self.root.join(rel);
        // Held while the file is made: once a signal's cleanup has begun,
        // nothing is created in the folder it removes (`cleanup`).
        let _writing = crate::cleanup::writing();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
        self.files += 1;
        self.bytes += bytes.len() as u64;
        Ok(())
    }
}

/// A TOML basic string, quoted and escaped.
fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn settings_toml(endpoints: &[DemoEndpoint]) -> String {
    let mut s = String::from(
        "# Settings of the bundled demo archive (generated by `perfdash demo`).\n\
         # Every key is optional; the analysis defaults apply (docs/archive.md).\n\
         \n\
         # Where the commits of run.toml live: the site links each run's commit\n\
         # and each suspect range (last good run → first bad run) there.\n\
         [site]\n\
         commit_url = \"https://git.example.com/shop/commit/{commit}\"\n\
         compare_url = \"https://git.example.com/shop/compare/{from}...{to}\"\n",
    );
    for e in endpoints {
        s.push_str(&format!(
            "\n[endpoints.{}]\nname = {}\n",
            e.id,
            toml_str(&e.name)
        ));
        if let Some(service) = &e.service {
            s.push_str(&format!("service = {}\n", toml_str(service)));
        }
        if let Some(c) = steps::CAPACITY.iter().find(|c| c.endpoint == e.id) {
            s.push_str(&format!("capacity_objective_p99_ms = {}\n", c.objective_ms));
        }
    }
    s
}

fn run_toml(run: &RunPlan) -> String {
    let mut s = format!(
        "started_at = {}\ncommit = \"{}\"\nbranch = \"main\"\n",
        calendar::rfc3339(run.started_at),
        run.commit
    );
    if let Some(release) = run.release {
        s.push_str(&format!("release = \"{release}\"\n"));
    }
    if !run.notes.is_empty() {
        s.push_str(&format!("notes = {}\n", toml_str(&run.notes.join("; "))));
    }
    s.push_str(&format!(
        "\n[environment]\nhost = \"{}\"\njvm_flags = \"-Xms2g -Xmx2g -XX:+UseG1GC\"\njava = \"21.0.5\"\nk6 = \"1.3.0\"\n",
        run.host
    ));
    s.push_str("\n[load]\n");
    for (k, v) in LOAD_PROFILE {
        s.push_str(&format!("{k} = \"{v}\"\n"));
    }
    s
}

/// The `[load]` of every run, as written: the same k6 script at the same
/// arrival rate, so throughput is judged too.
const LOAD_PROFILE: [(&str, &str); 3] = [
    ("executor", "constant-arrival-rate"),
    ("duration", "60s"),
    ("script_hash", "sha256:6f1d2c0e9b7a4f3e"),
];

/// [`LOAD_PROFILE`] as ingest reads it.
fn load_profile() -> std::collections::BTreeMap<String, String> {
    LOAD_PROFILE
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Everything decided before writing.
struct Plan {
    /// The story's endpoints, then the copies.
    endpoints: Vec<DemoEndpoint>,
    runs: Vec<RunPlan>,
    placed: Vec<Placed>,
    events: Vec<InjectedEvent>,
    /// The day of the last run: alarms reviewed after it are not triaged yet.
    last_date: NaiveDate,
}

struct RunPlan {
    index: usize,
    id: String,
    started_at: DateTime<Utc>,
    commit: String,
    release: Option<&'static str>,
    notes: Vec<&'static str>,
    host: &'static str,
    /// In [`Plan::endpoints`] order.
    endpoints: Vec<EndpointPlan>,
}

struct EndpointPlan {
    index: usize,
    rounds: Vec<RoundFigures>,
    /// Which rounds caught a GC pause.
    gc_tail: Vec<bool>,
    judged: Judged,
    profile: Option<String>,
}

/// How the default settings judge one endpoint in one run, walking the
/// history the way `analyse` does with the generator's own `accepted`
/// label applied. Needed while generating: a noisy-neighbour run is placed
/// against the baseline of its time.
#[derive(Debug, Clone, PartialEq)]
struct Judged {
    baseline: Option<f64>,
    median: f64,
    verdict: Verdict,
    /// What the verdict was decided from (the old rule re-decides from it
    /// with round 1's p99).
    evidence: verdict::Evidence,
}

fn label_file(label: &TriageLabel) -> String {
    format!("triage/{}--{}.toml", label.run, label.endpoint)
}

fn label_toml(l: &TriageLabel) -> String {
    let mut s = format!(
        "run = {}\nendpoint = {}\nlabel = {}\nnote = {}\nauthor = {}\ndate = {}\n",
        toml_str(&l.run),
        toml_str(&l.endpoint),
        toml_str(l.label.as_str()),
        toml_str(l.note.as_deref().unwrap_or_default()),
        toml_str(&l.author),
        calendar::date(l.date)
    );
    let f = &l.follow_up;
    for (key, value) in [
        ("owner", f.owner.as_deref()),
        ("issue", f.issue.as_deref()),
        ("status", f.status.map(|s| s.as_str())),
    ] {
        if let Some(v) = value {
            s.push_str(&format!("{key} = {}\n", toml_str(v)));
        }
    }
    s
}

/// An event placed on the run axis: runs `start..end`.
struct Placed {
    def: &'static EventDef,
    start: usize,
    end: usize,
}

impl Placed {
    fn hits(&self, run: usize, endpoint: &str) -> bool {
        (self.start..self.end).contains(&run) && self.def.endpoint.is_none_or(|e| e == endpoint)
    }

    /// A change people later trace to a commit: its onset gets a label.
    fn onset_label(&self) -> Option<Label> {
        match self.def.kind {
            EventKind::CodeRegression | EventKind::GcRegression | EventKind::Errors => {
                Some(Label::Real)
            }
            EventKind::AcceptedChange => Some(Label::Accepted),
            _ => None,
        }
    }
}

/// The first Monday on or after `start`.
fn first_monday(start: NaiveDate) -> NaiveDate {
    calendar::next_weekday(start - Days::new(1), Weekday::Mon)
}

fn run_index(week: u32, slot: u32) -> usize {
    (week * 3 + slot) as usize
}

fn plan(opts: &DemoOptions) -> Plan {
    let n = (opts.weeks * 3) as usize;
    let monday = first_monday(opts.start);
    let last_date = monday + Days::new(u64::from((opts.weeks - 1) * 7 + 4));
    let settings = Settings::default();
    let a = &settings.analysis;

    let placed: Vec<Placed> = EVENTS
        .iter()
        .filter_map(|def| {
            let start = run_index(def.week, def.slot);
            (start < n).then(|| Placed {
                def,
                start,
                end: def.runs.map_or(n, |r| (start + r as usize).min(n)),
            })
        })
        .collect();

    // Run skeletons: times, commits, releases, notes.
    let mut runs: Vec<RunPlan> = (0..n)
        .map(|index| {
            let (week, slot) = (index as u32 / 3, index as u32 % 3);
            let date = monday + Days::new(u64::from(week * 7 + slot * 2));
            let mut rng = Rng::derive(opts.seed, "run", index as u64, 0);
            let time = NaiveTime::from_hms_opt(3, rng.below(12) as u32, rng.below(60) as u32)
                .expect("valid time");
            let started_at = date.and_time(time).and_utc();
            let neighbour = placed
                .iter()
                .any(|p| p.def.kind == EventKind::NoisyNeighbour && p.hits(index, ""));
            let mut notes = Vec::new();
            for p in &placed {
                if p.start == index && !p.def.start_note.is_empty() {
                    notes.push(p.def.start_note);
                }
                if p.end == index && p.end < n && !p.def.fix_note.is_empty() {
                    notes.push(p.def.fix_note);
                }
            }
            let release = RELEASES
                .iter()
                .find(|(w, s, _)| run_index(*w, *s) == index)
                .map(|(_, _, v)| *v);
            if release.is_some() {
                notes.push("release candidate build");
            }
            RunPlan {
                index,
                id: calendar::run_id(started_at),
                started_at,
                commit: rng.hex40(),
                release,
                notes,
                host: if neighbour {
                    story::SHARED_HOST
                } else {
                    story::HOST
                },
                endpoints: Vec::new(),
            }
        })
        .collect();

    // Endpoint by endpoint, in time order, with the baseline walk
    // `analyse` uses, so a noisy-neighbour run can be placed against the
    // baseline of its time.
    let load = load_profile();
    let mut per_endpoint: Vec<Vec<EndpointPlan>> = Vec::new();
    let endpoints = demo_endpoints(opts.endpoints);
    for (ei, demo) in endpoints.iter().enumerate() {
        let def = demo.def;
        let mut walk = SeriesWalk::new(a, settings.threshold_ratio(&demo.id));
        let mut plans = Vec::with_capacity(n);
        for (ri, run) in runs.iter().enumerate() {
            let active: Vec<&Placed> = placed
                .iter()
                .filter(|p| p.hits(ri, demo.story_id()))
                .collect();
            let baseline = walk.baseline(&load).p99_ms;
            let (rounds, gc_tail) = rounds_for(opts, def, ei, ri, n, &active, baseline);
            let model_rounds: Vec<crate::model::Round> = rounds
                .iter()
                .enumerate()
                .map(|(k, r)| {
                    crate::model::Round::new(
                        k as u32 + 1,
                        String::new(),
                        crate::model::SourceFormat::K6HandleSummary,
                        r.stats(),
                    )
                })
                .collect();
            let figures = RunFigures::of(&model_rounds, a.failed_round_error_rate);
            let p99: Vec<f64> = rounds.iter().map(|r| r.p99).collect();
            let med = figures
                .p99_ms
                .or_else(|| median(&p99))
                .expect("at least one round");
            let accepted_onset = active
                .iter()
                .any(|p| p.start == ri && p.onset_label() == Some(Label::Accepted));
            let judged = walk.judge(RunInput {
                id: &run.id,
                rounds: rounds.len(),
                figures: &figures,
                median_p99_ms: med,
                load: &load,
                labelled_accepted: accepted_onset,
                // The demo writes k6 summaries.
                resolution: verdict::Resolution::Exact,
            });
            let verdict = judged.decision.verdict;
            let baseline = judged.baseline.p99_ms;
            let wanted =
                opts.profiles && wants_profile(&placed, ri, def.id, run.release.is_some(), n);
            let profile = wanted.then(|| {
                let events: Vec<(EventKind, f64)> = active
                    .iter()
                    .filter(|p| {
                        matches!(
                            p.def.kind,
                            EventKind::CodeRegression
                                | EventKind::GcRegression
                                | EventKind::AcceptedChange
                                | EventKind::Improvement
                        )
                    })
                    .map(|p| (p.def.kind, p.def.magnitude))
                    .collect();
                flame::profile(
                    def,
                    &events,
                    &mut Rng::derive(opts.seed, "flame", ri as u64, ei as u64),
                )
            });
            plans.push(EndpointPlan {
                index: ei,
                rounds,
                gc_tail,
                judged: Judged {
                    baseline,
                    median: med,
                    verdict,
                    evidence: judged.evidence,
                },
                profile,
            });
        }
        per_endpoint.push(plans);
    }
    // Transpose into runs.
    let mut columns: Vec<std::vec::IntoIter<EndpointPlan>> =
        per_endpoint.into_iter().map(Vec::into_iter).collect();
    for run in &mut runs {
        run.endpoints = columns
            .iter_mut()
            .map(|c| c.next().expect("one plan per run"))
            .collect();
    }

    let events = placed
        .iter()
        .map(|p| InjectedEvent {
            kind: p.def.kind,
            endpoints: endpoints
                .iter()
                .filter(|d| p.def.endpoint.is_none_or(|e| e == d.story_id()))
                .map(|d| d.id.clone())
                .collect(),
            runs: runs[p.start..p.end].iter().map(|r| r.id.clone()).collect(),
            open: p.end == n
                && p.def.runs.is_none_or(|r| p.start + r as usize > n)
                && p.def.kind != EventKind::NoisyNeighbour,
            magnitude: p.def.magnitude,
            label: p.def.kind.triage_label(),
            note: p.def.triage_note.to_string(),
        })
        .collect();
    Plan {
        endpoints,
        runs,
        placed,
        events,
        last_date,
    }
}

/// The weekly review is on Tuesday: the first Tuesday after the run.
fn review_date(run_date: NaiveDate) -> NaiveDate {
    calendar::next_weekday(run_date, Weekday::Tue)
}

/// The labels a team would have written by the last run, from the story.
///
/// People label the onset of each change they traced to a commit (`real`
/// for a regression, `accepted` for an intended change) at the first review
/// after it. Every other run that the default rule (the median of the
/// rounds) or the old one (round 1 alone) put over the line is labelled at
/// the review after it with what actually caused it (a team writes one
/// label an alarm; the generator, not knowing perfdash's alarm episodes,
/// labels each run of them). Over the line means as the generator's own
/// baseline walk judged it while generating ([`Judged`]; a test checks
/// that walk against `analyse`); nothing here runs the analysis. Runs
/// reviewed after the last run (the last few) stay untriaged, as in real
/// life.
fn triage_labels(plan: &Plan) -> Vec<TriageLabel> {
    let settings = Settings::default();
    let make = |run: usize, endpoint: &str, label: Label, note: String| {
        let date = review_date(plan.runs[run].started_at.date_naive());
        TriageLabel {
            run: plan.runs[run].id.clone(),
            endpoint: endpoint.to_string(),
            label,
            note: Some(note),
            author: story::TRIAGERS[(date.iso_week().week() % 3) as usize].to_string(),
            date,
            source: String::new(),
            follow_up: Default::default(),
        }
    };
    let mut labels: Vec<TriageLabel> = Vec::new();
    for p in &plan.placed {
        let (Some(label), Some(endpoint)) = (p.onset_label(), p.def.endpoint) else {
            continue;
        };
        // The story's endpoint and its copies.
        for demo in plan.endpoints.iter().filter(|d| d.story_id() == endpoint) {
            let mut entry = make(p.start, &demo.id, label, p.def.triage_note.to_string());
            if label == Label::Real {
                entry.follow_up = annotations::follow_up(plan, p, &entry.author);
            }
            labels.push(entry);
        }
    }
    for (ei, demo) in plan.endpoints.iter().enumerate() {
        let ratio = settings.threshold_ratio(&demo.id);
        for (ri, run) in plan.runs.iter().enumerate() {
            let ep = &run.endpoints[ei];
            let judged = &ep.judged;
            let first_round = ep.rounds.first().map_or(judged.median, |r| r.p99);
            // Over under the default rule (any figure: the verdict) or
            // the old one (round 1's p99 against the same baseline).
            let over = judged.verdict == Verdict::Regression
                || verdict::decide(&verdict::Evidence {
                    median_p99_ms: first_round,
                    ..judged.evidence
                })
                .verdict
                    == Verdict::Regression;
            let reviewed = review_date(run.started_at.date_naive()) <= plan.last_date;
            let taken = labels
                .iter()
                .any(|l| l.run == run.id && l.endpoint == demo.id);
            if over && reviewed && !taken {
                let (label, note) = cause(plan, ri, ei, ratio);
                labels.push(make(ri, &demo.id, label, note));
            }
        }
    }
    labels.retain(|l| l.date <= plan.last_date);
    labels.sort_by(|x, y| (&x.run, &x.endpoint).cmp(&(&y.run, &y.endpoint)));
    for l in &mut labels {
        l.source = label_file(l);
    }
    labels
}

/// The label and note a human would give a run over the line, from what
/// the generator knows caused it.
fn cause(plan: &Plan, run: usize, endpoint: usize, line: f64) -> (Label, String) {
    let id = plan.endpoints[endpoint].story_id();
    // An accepted change explains only the alarm at its onset: after that,
    // its level is the baseline and a new alarm has another cause.
    let active: Vec<&Placed> = plan
        .placed
        .iter()
        .filter(|p| p.hits(run, id))
        .filter(|p| p.def.kind != EventKind::AcceptedChange || p.start == run)
        .collect();
    for kind in [
        EventKind::CodeRegression,
        EventKind::GcRegression,
        EventKind::Errors,
        EventKind::AcceptedChange,
        EventKind::NoisyNeighbour,
    ] {
        if let Some(p) = active.iter().find(|p| p.def.kind == kind) {
            let label = match kind.triage_label() {
                "real" => Label::Real,
                "accepted" => Label::Accepted,
                _ => Label::Noise,
            };
            return (label, p.def.triage_note.to_string());
        }
    }
    let ep = &plan.runs[run].endpoints[endpoint];
    let ratio = |v: f64| ep.judged.baseline.map_or(0.0, |b| v / b);
    let median_note = format!(
        "median of the rounds {:.2}× the baseline",
        ratio(ep.judged.median)
    );
    let first = ep.rounds.first().map_or(0.0, |r| r.p99);
    if ratio(ep.judged.median) <= line && ratio(first) > line {
        if ep.gc_tail.first() == Some(&true) {
            return (
                Label::Noise,
                format!(
                    "GC pause in round 1 only (its p99 {:.2}× the baseline); {median_note}",
                    ratio(first)
                ),
            );
        }
        return (
            Label::Noise,
            format!(
                "round 1 over the line ({:.2}× the baseline), the other rounds are not; {median_note}",
                ratio(first)
            ),
        );
    }
    if let Some(p) = active.iter().find(|p| p.def.kind == EventKind::NoiseGrowth) {
        return (
            Label::Noise,
            format!("{}; {median_note}", p.def.triage_note),
        );
    }
    (
        Label::Noise,
        format!(
            "test-environment drift, nothing changed in the service; {median_note}; the next runs are back in the band"
        ),
    )
}

/// Profiles are taken for the endpoints with a regression, improvement or
/// accepted change: on every release run, on the run before the change, on
/// its first runs (all of them for a regression) and on the run after a
/// fix, so every change has a baseline profile before it. (Profiling every
/// endpoint on every release would double the archive's size.)
fn wants_profile(placed: &[Placed], run: usize, endpoint: &str, release: bool, n: usize) -> bool {
    let mut changes = placed.iter().filter(|p| {
        matches!(
            p.def.kind,
            EventKind::CodeRegression
                | EventKind::GcRegression
                | EventKind::AcceptedChange
                | EventKind::Improvement
        ) && p.def.endpoint == Some(endpoint)
    });
    changes.any(|p| {
        let regression = matches!(
            p.def.kind,
            EventKind::CodeRegression | EventKind::GcRegression
        );
        let last_profiled = if regression {
            p.end.min(p.start + 6)
        } else {
            p.start + 2
        };
        release
            || run + 1 == p.start
            || (p.start..last_profiled).contains(&run)
            || (run == p.end && p.end < n)
    })
}

/// A round in which every connection was refused, as k6 reports it: a
/// great many instant failures, every duration 0.
fn refused_round(def: &EndpointDef, rng: &mut Rng) -> RoundFigures {
    let count = (def.rate_rps * 60.0 * 40.0).round() as u64 + rng.below(500);
    RoundFigures {
        min: 0.0,
        med: 0.0,
        avg: 0.0,
        p90: 0.0,
        p95: 0.0,
        p99: 0.0,
        max: 0.0,
        count,
        failed: count,
        duration_ms: summary::round6(60_000.0 + rng.range(2.0, 40.0)),
        vus_peak: 20,
        vus_max: 20,
        received_bytes: 0,
        sent_bytes: 0,
    }
}

/// Generates one endpoint's rounds in one run. Returns the figures and
/// which rounds caught a GC pause.
fn rounds_for(
    opts: &DemoOptions,
    def: &EndpointDef,
    endpoint: usize,
    run: usize,
    n_runs: usize,
    active: &[&Placed],
    baseline: Option<f64>,
) -> (Vec<RoundFigures>, Vec<bool>) {
    let mut rng = Rng::derive(opts.seed, "rounds", run as u64, endpoint as u64);
    // The environment of the whole run (same draw for every endpoint).
    let env = Rng::derive(opts.seed, "env", run as u64, 0).factor(0.02);
    let drift = rng.factor(0.04 * def.noise_scale);

    let mut body_level = 1.0;
    let mut tail_level = 1.0;
    let mut round_sigma = 0.05 * def.noise_scale;
    let mut gc_chance = def.gc_tail_chance;
    let mut error_rate = def.error_rate;
    let mut neighbour = None;
    let gc_regression = active.iter().any(|p| p.def.kind == EventKind::GcRegression);
    for p in active {
        let m = p.def.magnitude;
        match p.def.kind {
            EventKind::SlowDrift => {
                let f = 1.0 + (m - 1.0) * run as f64 / (n_runs.max(2) - 1) as f64;
                body_level *= f;
                tail_level *= f;
            }
            EventKind::CodeRegression | EventKind::Improvement | EventKind::AcceptedChange => {
                body_level *= m;
                tail_level *= m;
            }
            EventKind::GcRegression => {
                tail_level *= m;
                body_level *= 1.0 + (m - 1.0) * 0.25;
                gc_chance *= 2.5;
                error_rate *= 4.0;
            }
            EventKind::NoisyNeighbour => neighbour = Some(m),
            EventKind::NoiseGrowth => round_sigma *= m,
            EventKind::Errors => error_rate = m,
            EventKind::FailedRound => {}
        }
    }
    let failed_round = active
        .iter()
        .any(|p| p.def.kind == EventKind::FailedRound)
        .then_some(2);

    let rounds = opts.rounds as usize;
    let mut gc_tail = vec![false; rounds];
    let mut factors: Vec<f64> = (0..rounds)
        .map(|i| {
            let sigma = if neighbour.is_some() {
                round_sigma * 1.6
            } else {
                round_sigma
            };
            let mut f = rng.factor(sigma);
            // A pause lands in at most two rounds of five: three would be a
            // configuration problem, not an occasional tail.
            if rng.chance(gc_chance)
                && (gc_regression || gc_tail.iter().filter(|t| **t).count() < 2)
            {
                gc_tail[i] = true;
                f *= rng.range(1.7, 2.3);
            }
            if i == 0 {
                // Round 1 runs right after the deploy: the JIT is still
                // compiling, so its tail is a little heavier.
                f *= 1.0 + 0.05 * rng.normal(3.0).abs();
            }
            f
        })
        .collect();

    let base = def.base_p99_ms;
    let (run_p99, body_run) = match neighbour {
        // Another tenant slows everything by about the same share. The lift
        // is set against the baseline perfdash computes with the default
        // settings, so the run's median stays under the ×1.15 line (7–12 %
        // over) while single rounds cross it: the false alarm of the naive
        // rule, and no alarm for the median rule.
        Some(m) => {
            let lift = (m * rng.factor(0.012)).clamp(1.07, 1.12);
            let mid = median(&factors).expect("rounds");
            factors.iter_mut().for_each(|f| *f /= mid);
            (
                baseline.unwrap_or(base * tail_level * env) * lift,
                base * body_level * lift,
            )
        }
        None => (
            base * tail_level * env * drift,
            base * body_level * env * drift,
        ),
    };

    let figures = factors
        .iter()
        .enumerate()
        .map(|(i, factor)| {
            if failed_round == Some(i) {
                return refused_round(def, &mut rng);
            }
            let p99 = summary::round6(run_p99 * factor);
            let body = body_run * rng.factor(0.03);
            let share = def.med_share;
            let mut med = body * share * rng.factor(0.02);
            let mut p90 = body * (share + (1.0 - share) * 0.45) * rng.factor(0.025);
            let mut p95 = body
                * (share + (1.0 - share) * 0.66)
                * rng.factor(0.03)
                * if gc_tail[i] { 1.1 } else { 1.0 };
            p95 = p95.min(p99 * 0.97);
            p90 = p90.min(p95 * 0.97);
            med = med.min(p90 * 0.9);
            let min = med * rng.range(0.28, 0.4);
            let max = p99
                * if gc_tail[i] {
                    rng.range(1.5, 2.6)
                } else {
                    rng.range(1.15, 1.9)
                };
            let avg = med + (p90 - med) * 0.35 + (p99 - p90) * 0.04;
            let count = (def.rate_rps * 60.0).round() as u64 - rng.below(4);
            let duration_ms =
                summary::round6(60_000.0 + rng.range(2.0, 40.0) + p99 * rng.uniform());
            let failed = ((count as f64) * error_rate * rng.factor(0.5).max(0.0) + rng.uniform())
                .floor() as u64;
            let vus_peak = (def.rate_rps * avg / 1000.0 * 2.0).ceil() as u64 + 2 + rng.below(3);
            RoundFigures {
                min,
                med,
                avg,
                p90,
                p95,
                p99,
                max,
                count,
                failed,
                duration_ms,
                vus_peak,
                vus_max: vus_peak.max(20),
                received_bytes: (count as f64 * (def.response_bytes + 214.0) * rng.factor(0.01))
                    .round() as u64,
                sent_bytes: (count as f64 * (def.request_bytes + 183.0)).round() as u64,
            }
        })
        .collect();
    (figures, gc_tail)
}

#[cfg(test)]
mod tests;
