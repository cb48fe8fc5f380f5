//! The gating policies by name: which one `perfdash check`, the weekly
//! page and `perfdash triage` follow is a setting (`[alarms] policy`), so
//! the names live with the settings; how each policy judges runs is
//! `analyse::policy`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A gating policy. The names are part of the JSON contract and of
/// `perfdash check --policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// The first round's p99 over baseline × ratio: what teams did before
    /// they took the median of several rounds.
    Naive,
    /// The median of the rounds' p99 over baseline × ratio: the verdict of
    /// `analyse::verdict::decide` itself, and the default.
    Median,
    /// `median`, but an alarm is raised only once it is confirmed by the
    /// runs after it.
    Persistent,
    /// The run median's robust z against the baseline window (median and
    /// floored MAD) over `alarms.robust_k`, and at least `alarms.min_effect`
    /// above the baseline.
    Robust,
    /// The latest Otava change point on the run medians so far raised the
    /// level by more than `changepoint.min_magnitude`, and the run is still
    /// at the new level (docs/detection.md).
    // Spelled as on the command line; kebab-case would give `change-point`.
    #[serde(rename = "changepoint")]
    ChangePoint,
}

/// The policy `perfdash check`, the weekly page and `perfdash triage` use
/// unless `[alarms] policy` or `--policy` says otherwise. It follows from
/// the evaluation in docs/detection.md (a test keeps the two in step).
pub const DEFAULT_POLICY: Policy = Policy::Median;

/// The sensitive reading beside the archive's policy: for quiet endpoints,
/// whose +10% steps stay under a ×1.15 line, the level shifts a change
/// point shows (docs/detection.md: the evaluation it follows from). Shown
/// on each endpoint page and in `analysis.json`; it never gates.
pub const SENSITIVE_POLICY: Policy = Policy::ChangePoint;

impl Policy {
    /// Every policy, in the order tables list them.
    pub const ALL: [Policy; 5] = [
        Policy::Naive,
        Policy::Median,
        Policy::Persistent,
        Policy::Robust,
        Policy::ChangePoint,
    ];

    /// The contract name (`naive`, `median`, …).
    pub fn name(self) -> &'static str {
        match self {
            Policy::Naive => "naive",
            Policy::Median => "median",
            Policy::Persistent => "persistent",
            Policy::Robust => "robust",
            Policy::ChangePoint => "changepoint",
        }
    }

    /// One line for tables and `--help`.
    pub fn summary(self) -> &'static str {
        match self {
            Policy::Naive => "first round's p99 > baseline × ratio",
            Policy::Median => "median of the rounds' p99 > baseline × ratio (default)",
            Policy::Persistent => "median, alarmed only once ≥2 of the next 3 runs are over too",
            Policy::Robust => {
                "robust z of the run median against the baseline window > k, and ≥ min effect"
            }
            Policy::ChangePoint => {
                "latest change point (Otava E-divisive + t-test) raised the level by > min magnitude"
            }
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Policy {
    type Err = String;

    fn from_str(s: &str) -> Result<Policy, String> {
        Policy::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Policy::ALL.iter().map(|p| p.name()).collect();
                format!(
                    "unknown policy '{s}' (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}
