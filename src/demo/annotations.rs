//! What the demo team wrote down besides labels: annotations of the
//! incidents and config changes of the story (`annotations/events.toml`),
//! and the follow-up (owner, issue, status) of each real regression.

use super::story::EventKind;
use super::{Placed, Plan, toml_str};
use crate::model::{FollowUp, Status};

/// Where the demo's annotations go, relative to the archive root.
pub(super) const ANNOTATIONS_FILE: &str = "annotations/events.toml";

/// Who follows up a real regression: the person who labelled it, an issue
/// in the team's tracker, and whether its fix is in (the event ended
/// before the last run) or it is still being investigated.
pub(super) fn follow_up(plan: &Plan, p: &Placed, author: &str) -> FollowUp {
    let open = p.end >= plan.runs.len();
    FollowUp {
        owner: Some(author.to_string()),
        issue: Some(format!("https://issues.example.com/SHOP-{}", 400 + p.start)),
        status: Some(if open {
            Status::Investigating
        } else {
            Status::Fixed
        }),
    }
}

/// One `[[annotation]]` per noisy-neighbour incident (every endpoint) and
/// per config change (its endpoint), at the run it hit; `None` when no such
/// event landed (a short history): a file without entries is not a valid
/// annotation file.
pub(super) fn annotations_toml(plan: &Plan) -> Option<String> {
    let mut s = String::from(
        "# What happened around the tests, drawn on the charts and listed on the\n\
         # history page (docs/site.md). Written by the demo generator.\n",
    );
    let mut entries = 0;
    for p in &plan.placed {
        let run = &plan.runs[p.start].id;
        let (text, endpoints, link) = match p.def.kind {
            EventKind::NoisyNeighbour => (
                "incident: batch job on the shared host perf-shared-03",
                String::new(),
                Some(format!(
                    "https://status.example.com/incidents/{}",
                    90 + p.start
                )),
            ),
            EventKind::GcRegression => (
                p.def.start_note,
                p.def
                    .endpoint
                    .map(|e| format!("endpoints = [{}]\n", toml_str(e)))
                    .unwrap_or_default(),
                None,
            ),
            _ => continue,
        };
        s.push_str(&format!(
            "\n[[annotation]]\nrun = {}\ntext = {}\n{endpoints}",
            toml_str(run),
            toml_str(text)
        ));
        if let Some(link) = link {
            s.push_str(&format!("link = {}\n", toml_str(&link)));
        }
        entries += 1;
    }
    (entries > 0).then_some(s)
}
