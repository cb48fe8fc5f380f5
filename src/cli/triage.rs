//! `perfdash triage`: alarms that need a human label.

use chrono::{NaiveDate, Utc};
use clap::Args;

use crate::analyse::{Policy, analyse};
use crate::ingest::load_archive;
use crate::report::triage::{suggested_file, template, untriaged};

#[derive(Debug, Args)]
pub struct TriageArgs {
    #[command(flatten)]
    pub archive: super::ArchiveArg,
    /// Print a ready-to-fill triage entry for each untriaged alarm.
    #[arg(long)]
    pub template: bool,
    /// Whose alarms: a policy name, or `all` for every policy's [default:
    /// `[alarms] policy` in perfdash.toml, else median].
    #[arg(long, value_name = "NAME")]
    pub policy: Option<String>,
    /// The date written into template entries (default: today, UTC).
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub date: Option<NaiveDate>,
}

pub(super) fn run(args: TriageArgs) -> anyhow::Result<u8> {
    // A bad name is a usage error before anything is read.
    let asked: Option<Vec<Policy>> = match args.policy.as_deref() {
        None => None,
        Some("all") => Some(Policy::ALL.to_vec()),
        Some(name) => Some(vec![name.parse::<Policy>().map_err(|e| {
            crate::error::Error::Usage(format!("--policy: {e}, or all"))
        })?]),
    };
    let readable = args.archive.readable()?;
    let loaded = load_archive(&readable.dir)?;
    let policies = asked.unwrap_or_else(|| vec![loaded.archive.settings.alarms.policy]);
    for d in &loaded.diagnostics {
        if d.path.starts_with(crate::ingest::triage::TRIAGE_DIR) {
            eprintln!("warning: {}", crate::term::escape(&args.archive.say(d)));
        }
    }
    let analysis = analyse(&loaded.archive, loaded.diagnostics);
    if args.template {
        let today = args.date.unwrap_or_else(|| Utc::now().date_naive());
        out!("{}", template(&analysis, &policies, today))?;
        return Ok(super::EXIT_OK);
    }
    let list = untriaged(&analysis, &policies);
    let labelled = analysis
        .alarms
        .alarms
        .iter()
        .filter(|a| a.label.is_some() && policies.contains(&a.policy))
        .count();
    outln!("{} untriaged alarm(s), {labelled} labelled", list.len())?;
    for u in &list {
        let a = u.alarm;
        outln!(
            "  {}  {:<24} {:<10} ×{}  → {}",
            crate::term::escape(&a.run),
            crate::term::escape(&a.endpoint),
            a.state.as_str(),
            a.ratio
                .map(|r| format!("{r:.2}"))
                .unwrap_or_else(|| "–".into()),
            crate::term::escape(&suggested_file(&a.run, &a.endpoint))
        )?;
    }
    Ok(super::EXIT_OK)
}
