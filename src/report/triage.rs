//! `perfdash triage`: which alarms still need a human label, and ready-to-
//! fill `triage/*.toml` entries for them.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::NaiveDate;

use crate::analyse::alarms::Alarm;
use crate::analyse::{Analysis, Policy};

/// One (run, endpoint) alarm without a label, with every policy that
/// raised it.
#[derive(Debug, Clone)]
pub struct Untriaged<'a> {
    /// The first policy's alarm (in [`Policy::ALL`] order), for the figures.
    pub alarm: &'a Alarm,
    pub policies: Vec<Policy>,
}

/// Unlabelled alarms of the given policies, oldest first, one per (run,
/// endpoint).
pub fn untriaged<'a>(analysis: &'a Analysis, policies: &[Policy]) -> Vec<Untriaged<'a>> {
    let mut by_key: BTreeMap<(chrono::DateTime<chrono::Utc>, &str, &str), Untriaged<'a>> =
        BTreeMap::new();
    for alarm in analysis
        .alarms
        .alarms
        .iter()
        .filter(|a| a.label.is_none() && policies.contains(&a.policy))
    {
        by_key
            .entry((
                alarm.started_at,
                alarm.run.as_str(),
                alarm.endpoint.as_str(),
            ))
            .and_modify(|u| u.policies.push(alarm.policy))
            .or_insert_with(|| Untriaged {
                alarm,
                policies: vec![alarm.policy],
            });
    }
    let mut out: Vec<Untriaged> = by_key.into_values().collect();
    for u in &mut out {
        u.policies.sort();
    }
    out
}

/// Text for a TOML comment: a comment ends at the line's end and may hold
/// no control character, so an id with a newline (a folder name can have
/// one) must not end it and start a line of its own; control characters
/// and bidirectional overrides are written as `\u{…}` escapes.
fn comment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// The file name the demo and the docs suggest for one label.
pub fn suggested_file(run: &str, endpoint: &str) -> String {
    format!("triage/{run}--{endpoint}.toml")
}

/// Ready-to-fill `[[label]]` entries, one per untriaged alarm. `label`
/// is left empty on purpose: perfdash rejects the file until a human
/// writes real, noise or accepted.
pub fn template(analysis: &Analysis, policies: &[Policy], today: NaiveDate) -> String {
    let list = untriaged(analysis, policies);
    let mut out = String::new();
    if list.is_empty() {
        out.push_str("# No untriaged alarms.\n");
        return out;
    }
    let _ = writeln!(
        out,
        "# {} untriaged alarm{}. Fill in label (real | noise | accepted), note and author,\n\
         # and for a real one who follows it up (owner, issue: an http(s) address, status:\n\
         # investigating | fixed | wontfix; empty values are fine). Then save each entry as\n\
         # its own file (suggested name above it) or keep them together in one triage/*.toml file.",
        list.len(),
        if list.len() == 1 { "" } else { "s" }
    );
    for u in list {
        let a = u.alarm;
        let name = analysis
            .endpoints
            .iter()
            .find(|e| e.id == a.endpoint)
            .map(|e| e.name.as_str())
            .unwrap_or("");
        let rounds: Vec<String> = a.round_p99_ms.iter().map(|r| format!("{r:.1}")).collect();
        let policies: Vec<&str> = u.policies.iter().map(|p| p.name()).collect();
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "# {}{}",
            comment(&a.endpoint),
            if name != a.endpoint {
                format!(" ({})", comment(name))
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            out,
            "# median p99 {:.1} ms{}; rounds {} ms; {}; raised by {}",
            a.median_p99_ms,
            match (a.baseline_p99_ms, a.ratio) {
                (Some(b), Some(r)) => format!(" vs baseline {b:.1} ms (×{r:.2})"),
                _ => String::new(),
            },
            rounds.join(", "),
            a.state,
            policies.join(", ")
        );
        let _ = writeln!(out, "# {}", comment(&suggested_file(&a.run, &a.endpoint)));
        let _ = writeln!(out, "[[label]]");
        let _ = writeln!(out, "run = {}", crate::escape::toml_string(&a.run));
        let _ = writeln!(
            out,
            "endpoint = {}",
            crate::escape::toml_string(&a.endpoint)
        );
        let _ = writeln!(out, "label = \"\"  # real | noise | accepted");
        let _ = writeln!(out, "note = \"\"");
        let _ = writeln!(out, "author = \"\"");
        let _ = writeln!(out, "date = {today}");
        let _ = writeln!(out, "owner = \"\"");
        let _ = writeln!(out, "issue = \"\"  # https://…");
        let _ = writeln!(out, "status = \"\"  # investigating | fixed | wontfix");
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// Whatever an id holds, a comment made of it stays one line of
        /// valid TOML.
        #[test]
        fn a_comment_of_any_text_is_one_valid_line(text in "\\PC*|[\\x00-\\x1f\\u{7f}\\u{202e}a-z\\n\\r]{0,20}") {
            let doc = format!("# {}\nkey = 1\n", super::comment(&text));
            prop_assert_eq!(doc.lines().count(), 2);
            let parsed: Result<toml::Table, _> = toml::from_str(&doc);
            prop_assert!(parsed.is_ok(), "{:?}", doc);
        }
    }
}
