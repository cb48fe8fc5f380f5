//! The history as Parquet tables (issue 37): `data/endpoint_runs.parquet`,
//! `data/rounds.parquet`, `data/alarms.parquet` and
//! `data/change_points.parquet`, for DuckDB, Spark or Trino to query
//! straight from the site's `data/` folder.
//!
//! Every value is one `data/analysis.json` (or a run's rounds file) holds,
//! taken from the same analysis values; nothing is recomputed. Column names
//! are those of the JSON where it has the field (snake_case), flattened
//! with a prefix where the JSON nests (`suspect_last_old_commit`). The
//! columns are listed once, in the functions below, and the section of
//! docs/data-contract.md that documents them is generated from the same
//! lists (a test keeps the two in step).
//!
//! The files are written with the low-level column writer of the `parquet`
//! crate (no Arrow arrays: faster to compile, and the tables are small)
//! and are byte-identical for the same analysis: rows in a stated order,
//! row groups of a fixed size, a fixed `created_by`, no timestamps.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use super::context::Ctx;
use super::rows::Page;
use crate::analyse::alarms::Alarm;
use crate::analyse::changepoint::LevelShift;
use crate::analyse::evidence::SuspectRange;
use crate::analyse::figures::FigureSummary;
use crate::analyse::verdict::{Figure, Verdict};
use crate::analyse::{EndpointAnalysis, RunInfo, RunPoint};
use crate::error::Error;
use crate::model::Round;

/// Bumped on any incompatible change to the tables (a column renamed,
/// removed, retyped or given another meaning); columns may be added
/// without. Written into each file's footer under [`VERSION_KEY`].
pub const TABLES_VERSION: u32 = 1;

/// The key-value metadata key holding [`TABLES_VERSION`].
pub const VERSION_KEY: &str = "perfdash.tables_version";

/// One table of the site's `data/` folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    EndpointRuns,
    Rounds,
    Alarms,
    ChangePoints,
}

impl Table {
    pub const ALL: [Table; 4] = [
        Table::EndpointRuns,
        Table::Rounds,
        Table::Alarms,
        Table::ChangePoints,
    ];

    /// The table's name: its file is `data/<name>.parquet`.
    pub fn name(self) -> &'static str {
        match self {
            Table::EndpointRuns => "endpoint_runs",
            Table::Rounds => "rounds",
            Table::Alarms => "alarms",
            Table::ChangePoints => "change_points",
        }
    }

    /// The file, relative to the site root.
    pub fn path(self) -> String {
        format!("data/{}.parquet", self.name())
    }

    /// What one row is, and the order rows are in.
    pub fn rows_are(self) -> &'static str {
        match self {
            Table::EndpointRuns => {
                "one row per endpoint per run with a point: each of `endpoints[].runs[]`, then \
                 each of `endpoints[].branch_runs[]`, in the order of analysis.json (endpoints \
                 by id, runs oldest first)"
            }
            Table::Rounds => {
                "one row per round of each run's rounds file (`data/runs/<run-slug>.json`): \
                 runs in the order of analysis.json's `runs[]`, then endpoints by id, then \
                 round number"
            }
            Table::Alarms => {
                "one row per entry of analysis.json's `alarms[]` (every policy's), in its order"
            }
            Table::ChangePoints => {
                "one row per entry of `endpoints[].change_points[]`: endpoints by id, oldest \
                 first"
            }
        }
    }

    /// The table's columns without rows: its schema, for the docs.
    fn schema(self) -> Vec<Column> {
        match self {
            Table::EndpointRuns => endpoint_run_columns(&[]),
            Table::Rounds => round_columns(&[]),
            Table::Alarms => alarm_columns(&[]),
            Table::ChangePoints => change_point_columns(&[]),
        }
    }
}

/// Rows per row group. A group's columns are made only when it is
/// written, so that a long history (281k rounds at 120 endpoints × three
/// years) is never held as columns whole; readers skip whole groups by
/// their statistics.
const ROW_GROUP_ROWS: usize = 65_536;

/// `data/<table>.parquet`, in memory.
pub fn render(ctx: &Ctx, table: Table) -> Result<Page, Error> {
    let path = table.path();
    let name = table.name();
    let bytes = match table {
        Table::EndpointRuns => {
            let points = endpoint_points(ctx)?;
            parquet_bytes(name, &points, ROW_GROUP_ROWS, |group| {
                let rows: Vec<_> = group.iter().map(|p| endpoint_run_row(ctx, p)).collect();
                endpoint_run_columns(&rows)
            })
        }
        Table::Rounds => parquet_bytes(name, &round_rows(ctx), ROW_GROUP_ROWS, round_columns),
        Table::Alarms => parquet_bytes(name, &alarm_rows(ctx), ROW_GROUP_ROWS, alarm_columns),
        Table::ChangePoints => parquet_bytes(
            name,
            &change_point_rows(ctx),
            ROW_GROUP_ROWS,
            change_point_columns,
        ),
    }
    .map_err(|e| Error::Internal(format!("{path}: {e}")))?;
    Ok((path, bytes))
}

/// The values of one column, `None` for null.
enum Values {
    Text(Vec<Option<String>>),
    /// Microseconds since 1970-01-01T00:00:00Z.
    Time(Vec<Option<i64>>),
    Double(Vec<Option<f64>>),
    Int(Vec<Option<i64>>),
    Bool(Vec<Option<bool>>),
}

impl Values {
    /// The column's Parquet type, as a schema message spells it.
    fn schema_type(&self) -> &'static str {
        match self {
            Values::Text(_) => "binary",
            Values::Time(_) | Values::Int(_) => "int64",
            Values::Double(_) => "double",
            Values::Bool(_) => "boolean",
        }
    }

    /// The logical type annotation, if any.
    fn logical_type(&self) -> &'static str {
        match self {
            Values::Text(_) => " (STRING)",
            Values::Time(_) => " (TIMESTAMP(MICROS,true))",
            _ => "",
        }
    }

    /// The type as the documentation names it (and DuckDB reads it).
    fn doc_type(&self) -> &'static str {
        match self {
            Values::Text(_) => "VARCHAR (STRING)",
            Values::Time(_) => "TIMESTAMPTZ (INT64 µs, UTC)",
            Values::Int(_) => "BIGINT (INT64)",
            Values::Double(_) => "DOUBLE",
            Values::Bool(_) => "BOOLEAN",
        }
    }
}

/// One column of a table.
struct Column {
    name: &'static str,
    /// Whether the column may hold nulls (OPTIONAL), where the JSON may
    /// hold `null` or leave the field out.
    nullable: bool,
    meaning: &'static str,
    values: Values,
}

/// Builds a table's columns from its rows, one column per call.
struct Columns<'r, R> {
    rows: &'r [R],
    out: Vec<Column>,
}

impl<'r, R> Columns<'r, R> {
    fn new(rows: &'r [R]) -> Self {
        Columns {
            rows,
            out: Vec::new(),
        }
    }

    fn push(
        mut self,
        name: &'static str,
        nullable: bool,
        meaning: &'static str,
        values: Values,
    ) -> Self {
        self.out.push(Column {
            name,
            nullable,
            meaning,
            values,
        });
        self
    }

    fn text(self, name: &'static str, meaning: &'static str, f: impl Fn(&R) -> &str) -> Self {
        let v = self.rows.iter().map(|r| Some(f(r).to_string())).collect();
        self.push(name, false, meaning, Values::Text(v))
    }

    fn text_owned(
        self,
        name: &'static str,
        meaning: &'static str,
        f: impl Fn(&R) -> String,
    ) -> Self {
        let v = self.rows.iter().map(|r| Some(f(r))).collect();
        self.push(name, false, meaning, Values::Text(v))
    }

    fn text_or_null(
        self,
        name: &'static str,
        meaning: &'static str,
        f: impl Fn(&R) -> Option<&str>,
    ) -> Self {
        let v = self.rows.iter().map(|r| f(r).map(str::to_string)).collect();
        self.push(name, true, meaning, Values::Text(v))
    }

    fn time(
        self,
        name: &'static str,
        meaning: &'static str,
        f: impl Fn(&R) -> DateTime<Utc>,
    ) -> Self {
        let v = self
            .rows
            .iter()
            .map(|r| Some(f(r).timestamp_micros()))
            .collect();
        self.push(name, false, meaning, Values::Time(v))
    }

    fn double(self, name: &'static str, meaning: &'static str, f: impl Fn(&R) -> f64) -> Self {
        let v = self.rows.iter().map(|r| Some(f(r))).collect();
        self.push(name, false, meaning, Values::Double(v))
    }

    /// A number the JSON may hold as `null`; a value that is not finite
    /// is null too, as serde_json writes it.
    fn double_or_null(
        self,
        name: &'static str,
        meaning: &'static str,
        f: impl Fn(&R) -> Option<f64>,
    ) -> Self {
        let v = self
            .rows
            .iter()
            .map(|r| f(r).filter(|v| v.is_finite()))
            .collect();
        self.push(name, true, meaning, Values::Double(v))
    }

    fn int(self, name: &'static str, meaning: &'static str, f: impl Fn(&R) -> i64) -> Self {
        let v = self.rows.iter().map(|r| Some(f(r))).collect();
        self.push(name, false, meaning, Values::Int(v))
    }

    fn int_or_null(
        self,
        name: &'static str,
        meaning: &'static str,
        f: impl Fn(&R) -> Option<i64>,
    ) -> Self {
        let v = self.rows.iter().map(&f).collect();
        self.push(name, true, meaning, Values::Int(v))
    }

    fn flag(self, name: &'static str, meaning: &'static str, f: impl Fn(&R) -> bool) -> Self {
        let v = self.rows.iter().map(|r| Some(f(r))).collect();
        self.push(name, false, meaning, Values::Bool(v))
    }

    fn flag_or_null(
        self,
        name: &'static str,
        meaning: &'static str,
        f: impl Fn(&R) -> Option<bool>,
    ) -> Self {
        let v = self.rows.iter().map(&f).collect();
        self.push(name, true, meaning, Values::Bool(v))
    }

    /// The scalar figures of a [`FigureSummary`] (`figures` in the JSON),
    /// and one flag per figure of `figures.regressed`.
    fn figures(self, figures: fn(&R) -> &FigureSummary) -> Self {
        let regressed = |r: &R, figure: Figure| figures(r).regressed.contains(&figure);
        self.double_or_null(
            "p90_ms",
            "`figures.p90_ms`: median of the usable rounds' p90",
            |r| figures(r).p90_ms,
        )
        .double_or_null(
            "p99_line_ms",
            "`figures.p99_line_ms`: baseline × the line ratio",
            |r| figures(r).p99_line_ms,
        )
        .double_or_null("error_rate", "`figures.error_rate`, 0..1", |r| {
            figures(r).error_rate
        })
        .double_or_null(
            "baseline_error_rate",
            "`figures.baseline_error_rate`",
            |r| figures(r).baseline_error_rate,
        )
        .double_or_null("error_rate_line", "`figures.error_rate_line`", |r| {
            figures(r).error_rate_line
        })
        .double_or_null("throughput_rps", "`figures.throughput_rps`", |r| {
            figures(r).throughput_rps
        })
        .double_or_null(
            "baseline_throughput_rps",
            "`figures.baseline_throughput_rps`",
            |r| figures(r).baseline_throughput_rps,
        )
        .double_or_null(
            "throughput_line_rps",
            "`figures.throughput_line_rps`",
            |r| figures(r).throughput_line_rps,
        )
        .text_or_null(
            "throughput_not_judged",
            "`figures.throughput_not_judged`",
            |r| figures(r).throughput_not_judged.as_deref(),
        )
        .double_or_null(
            "spread",
            "`figures.spread`: (max − min) ÷ median of the usable rounds' p99",
            |r| figures(r).spread,
        )
        .int("rounds", "`figures.rounds`", |r| count(figures(r).rounds))
        .int("usable_rounds", "`figures.usable_rounds`", |r| {
            count(figures(r).usable_rounds)
        })
        .int(
            "failed_round_count",
            "how many `figures.failed_rounds[]` there are",
            |r| count(figures(r).failed_rounds.len()),
        )
        .flag(
            "regressed_p99",
            "`figures.regressed` holds `p99`",
            move |r| regressed(r, Figure::P99),
        )
        .flag(
            "regressed_error_rate",
            "`figures.regressed` holds `error-rate`",
            move |r| regressed(r, Figure::ErrorRate),
        )
        .flag(
            "regressed_throughput",
            "`figures.regressed` holds `throughput`",
            move |r| regressed(r, Figure::Throughput),
        )
    }

    /// A `suspect` range (alarms, change points), flattened.
    fn suspect(self, suspect: fn(&R) -> &SuspectRange) -> Self {
        self.text_or_null("suspect_last_old_run", "`suspect.last_old_run`", |r| {
            suspect(r).last_old_run.as_deref()
        })
        .text_or_null(
            "suspect_last_old_commit",
            "`suspect.last_old_commit`",
            |r| suspect(r).last_old_commit.as_deref(),
        )
        .text("suspect_first_new_run", "`suspect.first_new_run`", |r| {
            &suspect(r).first_new_run
        })
        .text_or_null(
            "suspect_first_new_commit",
            "`suspect.first_new_commit`",
            |r| suspect(r).first_new_commit.as_deref(),
        )
    }

    fn done(self) -> Vec<Column> {
        self.out
    }
}

/// A count as a column holds it (every count here is far below 2⁶³).
fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// An enum's string exactly as analysis.json writes it (its serde name),
/// for the enums without a contract-name method.
fn json_name(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        other => format!("{other:?}"),
    }
}

/// One point of one endpoint, with its run.
struct EndpointRunRow<'a> {
    endpoint: &'a EndpointAnalysis,
    endpoint_slug: &'a str,
    service: Option<&'a str>,
    point: &'a RunPoint,
    run: &'a RunInfo,
    branch_run: bool,
    figures: FigureSummary,
    rounds_file: String,
}

/// Where a row of `endpoint_runs` comes from; the row itself, with its
/// figures, is made when its row group is written.
struct EndpointPoint<'a> {
    endpoint: &'a EndpointAnalysis,
    point: &'a RunPoint,
    run: &'a RunInfo,
    branch_run: bool,
}

fn endpoint_points<'a>(ctx: &Ctx<'a>) -> Result<Vec<EndpointPoint<'a>>, Error> {
    let mut out = Vec::new();
    for e in &ctx.analysis.endpoints {
        for (branch_run, points) in [(false, &e.points), (true, &e.branch_points)] {
            for p in points {
                let run = ctx.run(&p.run).ok_or_else(|| {
                    Error::Internal(format!(
                        "data/endpoint_runs.parquet: run {} of {} is no run",
                        p.run, e.id
                    ))
                })?;
                out.push(EndpointPoint {
                    endpoint: e,
                    point: p,
                    run,
                    branch_run,
                });
            }
        }
    }
    Ok(out)
}

fn endpoint_run_row<'a>(ctx: &Ctx<'a>, from: &EndpointPoint<'a>) -> EndpointRunRow<'a> {
    let (e, p) = (from.endpoint, from.point);
    EndpointRunRow {
        endpoint: e,
        endpoint_slug: ctx.slugs.endpoint(&e.id),
        service: ctx.analysis.settings.endpoint_service(&e.id),
        point: p,
        run: from.run,
        branch_run: from.branch_run,
        // As analysis.json's `figures` and `rounds_file` (`data::point_json`).
        figures: FigureSummary::of(p),
        rounds_file: super::data::run_rounds_path(ctx.slugs.run(&p.run)),
    }
}

fn endpoint_run_columns(rows: &[EndpointRunRow]) -> Vec<Column> {
    let c = Columns::new(rows)
        .text("run", "the run id (`runs[].id`, `endpoints[].runs[].run`)", |r| {
            &r.point.run
        })
        .time("started_at", "when the run started (`runs[].started_at`)", |r| {
            r.point.started_at
        })
        .text_or_null("commit", "`runs[].commit`", |r| r.run.meta.commit.as_deref())
        .text_or_null("branch", "`runs[].branch`", |r| r.run.meta.branch.as_deref())
        .text_or_null("release", "`runs[].release`", |r| r.run.meta.release.as_deref())
        .text_or_null("host", "`runs[].environment.host`", |r| {
            r.run.meta.environment.get("host").map(String::as_str)
        })
        .text("endpoint", "the endpoint's id (`endpoints[].id`, as `alarms[].endpoint`)", |r| {
            &r.endpoint.id
        })
        .text("endpoint_name", "its display name (`endpoints[].name`)", |r| {
            &r.endpoint.name
        })
        .text("endpoint_slug", "`endpoints[].slug`: its page is `endpoints/<slug>.html`", |r| {
            r.endpoint_slug
        })
        .text_or_null("service", "`endpoints[].service`; null when no endpoint has a service", |r| {
            r.service
        })
        .flag("branch_run", "the point is one of `endpoints[].branch_runs[]` (judged against the main baseline), not of `endpoints[].runs[]`", |r| {
            r.branch_run
        });
    endpoint_run_judgement_columns(c).done()
}

/// The point's figures, verdict and flags.
fn endpoint_run_judgement_columns<'r>(
    c: Columns<'r, EndpointRunRow<'r>>,
) -> Columns<'r, EndpointRunRow<'r>> {
    c.double(
        "median_p99_ms",
        "`median_p99_ms`: median of the usable rounds' p99",
        |r| r.point.median_p99_ms,
    )
    .double_or_null("baseline_p99_ms", "`baseline_p99_ms`", |r| {
        r.point.baseline_p99_ms
    })
    .double_or_null("ratio", "`ratio`: median ÷ baseline", |r| r.point.ratio)
    .double(
        "line_ratio",
        "`line_ratio`: the p99 line as a ratio to the baseline",
        |r| r.point.line_ratio(),
    )
    .double_or_null("noise_spread", "`noise_spread`", |r| {
        r.point.decided_from.noise_spread
    })
    .text(
        "verdict",
        "`verdict`: `failed`, `regression`, `improvement`, `ok`, `no-baseline`, `insufficient`",
        |r| r.point.verdict.as_str(),
    )
    .figures(|r| &r.figures)
    .flag("failed", "`verdict` is `failed`", |r| {
        r.point.verdict == Verdict::Failed
    })
    .flag(
        "accepted_change",
        "`accepted_change`: a regression inside a change triaged `accepted`",
        |r| r.point.accepted_change,
    )
    .text_or_null("not_comparable", "`not_comparable`", |r| {
        r.point.not_comparable.as_deref()
    })
    .text_or_null("no_baseline_reason", "`no_baseline_reason`", |r| {
        r.point.no_baseline_reason.as_deref()
    })
    .int(
        "baseline_run_count",
        "how many `baseline_runs[]` there are",
        |r| count(r.point.baseline_runs.len()),
    )
    .flag(
        "incomplete",
        "`runs[].incomplete`: some input of the run was skipped",
        |r| !r.run.problems.is_empty(),
    )
    .flag(
        "environment_suspect",
        "`runs[].environment_suspect` is not null: most endpoints of the run moved together",
        |r| r.run.environment_suspect.is_some(),
    )
    .text_or_null("untrusted_time", "`runs[].untrusted_time`", |r| {
        r.run.untrusted_time.as_deref()
    })
    .text_or_null("series", "`runs[].series`", |r| r.run.series.as_deref())
    .text_or_null("host_changed", "`runs[].host_changed`", |r| {
        r.run.host_changed.as_deref()
    })
    .text(
        "rounds_file",
        "`rounds_file`: the run's rounds, relative to the site root",
        |r| &r.rounds_file,
    )
}

/// One round of one point.
struct RoundRow<'a> {
    run: &'a RunInfo,
    endpoint: &'a str,
    round: &'a Round,
    failed: bool,
}

fn round_rows<'a>(ctx: &Ctx<'a>) -> Vec<RoundRow<'a>> {
    let mut rows = Vec::new();
    for (i, run) in ctx.analysis.runs.iter().enumerate() {
        // What the run's rounds file holds (`data::RunRoundsInputs`).
        for &(e, p) in ctx.points_of_run(i) {
            for round in p.rounds.iter() {
                rows.push(RoundRow {
                    run,
                    endpoint: &e.id,
                    round,
                    failed: p
                        .figures
                        .failed_rounds
                        .iter()
                        .any(|f| f.round == round.number),
                });
            }
        }
    }
    rows
}

fn round_columns(rows: &[RoundRow]) -> Vec<Column> {
    let stat =
        |f: fn(&crate::model::RoundStats) -> Option<f64>| move |r: &RoundRow| f(&r.round.stats);
    Columns::new(rows)
        .text("run", "the run id", |r| &r.run.id)
        .time("started_at", "when the run started", |r| r.run.started_at)
        .text(
            "endpoint",
            "the endpoint's id (the key in the rounds file)",
            |r| r.endpoint,
        )
        .int("number", "`number`: `n` of `round-<n>`", |r| {
            i64::from(r.round.number)
        })
        .text_or_null("label", "`label`", |r| r.round.label.as_deref())
        .text(
            "source",
            "`source`: the file, relative to the archive",
            |r| &r.round.source,
        )
        .text_owned("format", "`format`: the format it was read as", |r| {
            json_name(&r.round.format)
        })
        .flag(
            "failed",
            "the round is one of the point's `figures.failed_rounds[]`",
            |r| r.failed,
        )
        .int_or_null("count", "`stats.count`: requests", |r| {
            r.round.stats.count.and_then(|c| i64::try_from(c).ok())
        })
        .double_or_null(
            "throughput_rps",
            "`stats.throughput_rps`",
            stat(|s| s.throughput_rps),
        )
        .double_or_null("mean_ms", "`stats.mean_ms`", stat(|s| s.mean_ms))
        .double_or_null("stddev_ms", "`stats.stddev_ms`", stat(|s| s.stddev_ms))
        .double_or_null("min_ms", "`stats.min_ms`", stat(|s| s.min_ms))
        .double_or_null("p50_ms", "`stats.p50_ms`", stat(|s| s.p50_ms))
        .double_or_null("p90_ms", "`stats.p90_ms`", stat(|s| s.p90_ms))
        .double_or_null("p95_ms", "`stats.p95_ms`", stat(|s| s.p95_ms))
        .double("p99_ms", "`stats.p99_ms`", |r| r.round.stats.p99_ms)
        .double_or_null("max_ms", "`stats.max_ms`", stat(|s| s.max_ms))
        .double_or_null(
            "error_rate",
            "`stats.error_rate`, 0..1",
            stat(|s| s.error_rate),
        )
        .double_or_null(
            "warmup_s",
            "`warmup_s`: seconds of warm-up trimmed from a raw file",
            |r| r.round.warmup_s,
        )
        .double_or_null(
            "cross_check_summary_p99_ms",
            "`cross_check.summary_p99_ms`",
            |r| r.round.cross_check.as_ref().map(|c| c.summary_p99_ms),
        )
        .flag_or_null("cross_check_agrees", "`cross_check.agrees`", |r| {
            r.round.cross_check.as_ref().map(|c| c.agrees)
        })
        .done()
}

/// One alarm, with its endpoint's service.
struct AlarmRow<'a> {
    alarm: &'a Alarm,
    service: Option<&'a str>,
}

fn alarm_rows<'a>(ctx: &Ctx<'a>) -> Vec<AlarmRow<'a>> {
    let analysis = ctx.analysis;
    analysis
        .alarms
        .alarms
        .iter()
        .map(|alarm| AlarmRow {
            alarm,
            service: analysis.settings.endpoint_service(&alarm.endpoint),
        })
        .collect()
}

fn alarm_columns(rows: &[AlarmRow]) -> Vec<Column> {
    let c = Columns::new(rows)
        .text(
            "policy",
            "`policy`: `naive`, `median`, `persistent`, `robust`, `changepoint`",
            |r| r.alarm.policy.name(),
        )
        .text("endpoint", "`endpoint`: the endpoint's id", |r| {
            &r.alarm.endpoint
        })
        .text_or_null("service", "the endpoint's `endpoints[].service`", |r| {
            r.service
        })
        .text(
            "run",
            "`run`: the alarm's first run (the first at the new level)",
            |r| &r.alarm.run,
        )
        .time("started_at", "`started_at`: when `run` started", |r| {
            r.alarm.started_at
        })
        .text(
            "first_over_run",
            "`first_over_run`: the first run over the line, whose figures follow",
            |r| &r.alarm.first_over_run,
        )
        .text(
            "state",
            "`state`: `candidate`, `confirmed`, `reverted`",
            |r| r.alarm.state.as_str(),
        )
        .text_or_null(
            "label",
            "`label`: the human label (`real`, `noise`, `accepted`)",
            |r| r.alarm.label.map(|l| l.as_str()),
        )
        .text_or_null("inferred_label", "`inferred_label`: `real`, `noise`", |r| {
            r.alarm.inferred_label.map(|l| l.as_str())
        })
        .text_or_null("label_source", "`label_source`", |r| {
            r.alarm.label_source.as_deref()
        })
        .text_or_null("label_note", "`label_note`", |r| {
            r.alarm.label_note.as_deref()
        })
        .text(
            "raised_run",
            "`raised_run`: the run at which the policy raised it",
            |r| &r.alarm.raised_run,
        )
        .time("raised_at", "`raised_at`", |r| r.alarm.raised_at)
        .text_or_null("confirmed_run", "`confirmed_run`", |r| {
            r.alarm.confirmed_run.as_deref()
        })
        .text_or_null("closed_run", "`closed_run`", |r| {
            r.alarm.closed_run.as_deref()
        })
        .int("over_run_count", "how many `over_runs[]` there are", |r| {
            count(r.alarm.over_runs.len())
        });
    alarm_figure_columns(c).done()
}

/// The alarm's candidate run (`first_over_run`): its figures and
/// verdict, and the suspect range.
fn alarm_figure_columns<'r, 'a>(c: Columns<'r, AlarmRow<'a>>) -> Columns<'r, AlarmRow<'a>> {
    c.double(
        "median_p99_ms",
        "`median_p99_ms` of `first_over_run`",
        |r| r.alarm.median_p99_ms,
    )
    .double_or_null("baseline_p99_ms", "`baseline_p99_ms`", |r| {
        r.alarm.baseline_p99_ms
    })
    .double_or_null("ratio", "`ratio`: median ÷ baseline", |r| r.alarm.ratio)
    .double_or_null(
        "run_median_ratio",
        "`run_median_ratio`: over every endpoint of the run",
        |r| r.alarm.run_median_ratio,
    )
    .int("run_endpoints", "`run_endpoints`", |r| {
        count(r.alarm.run_endpoints)
    })
    .flag("environment_suspect", "`environment_suspect`", |r| {
        r.alarm.environment_suspect
    })
    .text("verdict", "`verdict` of `first_over_run`", |r| {
        r.alarm.verdict.as_str()
    })
    .figures(|r| &r.alarm.figures)
    .suspect(|r| &r.alarm.suspect)
}

/// One change point, with its endpoint.
struct ChangePointRow<'a> {
    endpoint: &'a str,
    service: Option<&'a str>,
    shift: &'a LevelShift,
}

fn change_point_rows<'a>(ctx: &Ctx<'a>) -> Vec<ChangePointRow<'a>> {
    let analysis = ctx.analysis;
    let mut rows = Vec::new();
    for e in &analysis.endpoints {
        let service = analysis.settings.endpoint_service(&e.id);
        rows.extend(e.change_points.iter().map(|shift| ChangePointRow {
            endpoint: &e.id,
            service,
            shift,
        }));
    }
    rows
}

fn change_point_columns(rows: &[ChangePointRow]) -> Vec<Column> {
    Columns::new(rows)
        .text("endpoint", "the endpoint's id (`endpoints[].id`)", |r| {
            r.endpoint
        })
        .text_or_null("service", "`endpoints[].service`", |r| r.service)
        .text("run", "`run`: the first run at the new level", |r| {
            &r.shift.run
        })
        .time("started_at", "`started_at`: when that run started", |r| {
            r.shift.started_at
        })
        .double("level_before_ms", "`level_before_ms`", |r| {
            r.shift.level_before_ms
        })
        .double("level_after_ms", "`level_after_ms`", |r| {
            r.shift.level_after_ms
        })
        .double(
            "change",
            "`change`: level_after ÷ level_before − 1",
            |r| r.shift.change,
        )
        .text(
            "direction",
            "`direction`: `regression` or `improvement`",
            |r| r.shift.direction,
        )
        .double("pvalue", "`pvalue`", |r| r.shift.pvalue)
        .suspect(|r| &r.shift.suspect)
        .done()
}

/// The schema of a table as a Parquet message type.
fn message_type(table: &str, columns: &[Column]) -> String {
    let mut out = format!("message {table} {{\n");
    for c in columns {
        let repetition = if c.nullable { "optional" } else { "required" };
        out.push_str(&format!(
            "  {repetition} {} {}{};\n",
            c.values.schema_type(),
            c.name,
            c.values.logical_type()
        ));
    }
    out.push('}');
    out
}

/// The table as one Parquet file: row groups of `group_rows` rows, each
/// group's columns made by `columns` when it is written (none for no
/// rows: the schema is `columns` of no rows), SNAPPY pages, the version
/// in the footer and nothing that changes from one build to the next.
fn parquet_bytes<R>(
    table: &str,
    rows: &[R],
    group_rows: usize,
    columns: impl Fn(&[R]) -> Vec<Column>,
) -> Result<Vec<u8>, ParquetError> {
    let schema = Arc::new(parse_message_type(&message_type(table, &columns(&[])))?);
    let properties = WriterProperties::builder()
        .set_created_by(format!("perfdash {}", env!("CARGO_PKG_VERSION")))
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(vec![KeyValue::new(
            VERSION_KEY.to_string(),
            TABLES_VERSION.to_string(),
        )]))
        .build();
    let mut out = Vec::new();
    let mut writer = SerializedFileWriter::new(&mut out, schema, Arc::new(properties))?;
    for group_of_rows in rows.chunks(group_rows.max(1)) {
        let mut group = writer.next_row_group()?;
        for column in columns(group_of_rows) {
            let mut writer = group.next_column()?.ok_or_else(|| {
                ParquetError::General(format!("no column writer for {}", column.name))
            })?;
            write_values(&mut writer, &column)?;
            writer.close()?;
        }
        group.close()?;
    }
    writer.close()?;
    Ok(out)
}

/// The values present, and the definition levels of a nullable column
/// (1: a value, 0: null).
fn present<T: Clone>(values: &[Option<T>], nullable: bool) -> (Vec<T>, Option<Vec<i16>>) {
    let present = values.iter().flatten().cloned().collect();
    let levels = nullable.then(|| values.iter().map(|v| i16::from(v.is_some())).collect());
    (present, levels)
}

fn write_values(
    writer: &mut parquet::file::writer::SerializedColumnWriter<'_>,
    column: &Column,
) -> Result<(), ParquetError> {
    let nullable = column.nullable;
    match &column.values {
        Values::Text(v) => {
            let (values, levels) = present(v, nullable);
            let values: Vec<ByteArray> = values
                .into_iter()
                .map(|s| ByteArray::from(s.into_bytes()))
                .collect();
            writer
                .typed::<ByteArrayType>()
                .write_batch(&values, levels.as_deref(), None)?;
        }
        Values::Time(v) | Values::Int(v) => {
            let (values, levels) = present(v, nullable);
            writer
                .typed::<Int64Type>()
                .write_batch(&values, levels.as_deref(), None)?;
        }
        Values::Double(v) => {
            let (values, levels) = present(v, nullable);
            writer
                .typed::<DoubleType>()
                .write_batch(&values, levels.as_deref(), None)?;
        }
        Values::Bool(v) => {
            let (values, levels) = present(v, nullable);
            writer
                .typed::<BoolType>()
                .write_batch(&values, levels.as_deref(), None)?;
        }
    }
    Ok(())
}

/// The section of docs/data-contract.md that lists every table and
/// column (`doc_section` name [`DOC_SECTION`]).
pub fn columns_markdown() -> String {
    let mut out = String::new();
    for table in Table::ALL {
        let columns = table.schema();
        out.push_str(&format!(
            "#### `{}`\n\n{}.\n\n| column | type | null | meaning |\n| --- | --- | --- | --- |\n",
            table.path(),
            capitalised(table.rows_are())
        ));
        for c in &columns {
            out.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                c.name,
                c.values.doc_type(),
                if c.nullable { "yes" } else { "no" },
                c.meaning
            ));
        }
        out.push('\n');
    }
    out
}

/// The name of the generated section in docs/data-contract.md.
pub const DOC_SECTION: &str = "parquet-tables";

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;

    /// docs/data-contract.md lists every table and column as the code
    /// writes them; when a column changes this fails until the section is
    /// replaced with the text it prints.
    #[test]
    fn the_data_contract_lists_every_column() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/data-contract.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let expected = columns_markdown();
        let section = crate::doc_section::section(&doc, DOC_SECTION);
        assert_eq!(
            section,
            Some(expected.as_str()),
            "docs/data-contract.md: the `{DOC_SECTION}` section should read:\n{expected}"
        );
    }

    #[test]
    fn an_empty_table_is_a_file_with_its_schema_and_version() {
        let columns = Table::Alarms.schema();
        let bytes = parquet_bytes("alarms", &[], ROW_GROUP_ROWS, alarm_columns).unwrap();
        // `bytes` (which the reader reads from) as prost re-exports it.
        let reader = SerializedFileReader::new(prost::bytes::Bytes::from(bytes)).unwrap();
        let meta = reader.metadata().file_metadata();
        assert_eq!(meta.num_rows(), 0);
        assert_eq!(reader.metadata().num_row_groups(), 0);
        assert_eq!(meta.schema_descr().num_columns(), columns.len());
        assert_eq!(
            meta.created_by(),
            Some(concat!("perfdash ", env!("CARGO_PKG_VERSION")))
        );
        let version = meta
            .key_value_metadata()
            .unwrap()
            .iter()
            .find(|kv| kv.key == VERSION_KEY)
            .and_then(|kv| kv.value.clone());
        assert_eq!(version, Some(TABLES_VERSION.to_string()));
    }

    #[test]
    fn nulls_are_nulls_and_column_names_are_unique() {
        for table in Table::ALL {
            let columns = table.schema();
            let mut names: Vec<&str> = columns.iter().map(|c| c.name).collect();
            names.sort_unstable();
            let before = names.len();
            names.dedup();
            assert_eq!(names.len(), before, "{}: a column name twice", table.name());
            // The schema parses: every name is a plain identifier.
            parse_message_type(&message_type(table.name(), &columns)).unwrap();
        }
        let rows = [Some(1.5), None, Some(f64::NAN)];
        let c = Columns::new(&rows).double_or_null("x", "", |r| *r).done();
        let Values::Double(v) = &c[0].values else {
            panic!("a double column")
        };
        assert_eq!(v[..2], [Some(1.5), None]);
        assert_eq!(
            v[2], None,
            "NaN is written as null, as serde_json writes it"
        );
    }

    #[test]
    fn rows_are_written_in_order_in_groups_of_the_given_size() {
        let rows: Vec<i64> = (0..5).collect();
        let columns = |group: &[i64]| Columns::new(group).int("x", "", |r| *r).done();
        let bytes = parquet_bytes("t", &rows, 2, columns).unwrap();
        let reader = SerializedFileReader::new(prost::bytes::Bytes::from(bytes.clone())).unwrap();
        assert_eq!(reader.metadata().num_row_groups(), 3);
        let read: Vec<i64> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|row| row.unwrap().get_long(0).unwrap())
            .collect();
        assert_eq!(read, rows);
        assert_eq!(
            parquet_bytes("t", &rows, 2, columns).unwrap(),
            bytes,
            "the same rows give the same bytes"
        );
    }
}
