//! How a judged run is shown: the one place that turns a verdict (and
//! whether a human accepted the change) into a colour class, so the
//! heatmap, the sparklines, the trend chart and the tables agree.

use crate::analyse::{RunPoint, Verdict};

/// What a run looks like on the site. Differs from [`Verdict`] in one way:
/// a regression inside a change triaged `accepted` (an intended new level)
/// is shown in a neutral colour, not as an alarm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DisplayState {
    Failed,
    Regression,
    Insufficient,
    Accepted,
    Ok,
    Improvement,
    /// Last: a run that could not be judged says the least about its week,
    /// so a judged run beside it (an improvement, say) names the week.
    NoBaseline,
}

impl DisplayState {
    /// Every state, worst first (the heatmap's "worst of the week" order).
    pub const ALL: [DisplayState; 7] = [
        DisplayState::Failed,
        DisplayState::Regression,
        DisplayState::Insufficient,
        DisplayState::Accepted,
        DisplayState::Ok,
        DisplayState::Improvement,
        DisplayState::NoBaseline,
    ];

    /// The CSS class suffix (`h-…`, `v-…`); the verdict's contract string
    /// for every state but `accepted`.
    pub fn key(self) -> &'static str {
        match self {
            DisplayState::Failed => "failed",
            DisplayState::Regression => "regression",
            DisplayState::Insufficient => "insufficient",
            DisplayState::NoBaseline => "no-baseline",
            DisplayState::Accepted => "accepted",
            DisplayState::Ok => "ok",
            DisplayState::Improvement => "improvement",
        }
    }

    /// Legend words.
    pub fn words(self) -> &'static str {
        match self {
            DisplayState::Failed => "failed run",
            DisplayState::Regression => "regression",
            DisplayState::Insufficient => "insufficient rounds",
            DisplayState::NoBaseline => "no baseline yet",
            DisplayState::Accepted => "accepted change",
            DisplayState::Ok => "ok",
            DisplayState::Improvement => "improvement",
        }
    }

    /// How bad it is: 0 is worst. An accepted change ranks below too few
    /// rounds but above ok; "no baseline yet" ranks last, so that a week
    /// whose first runs had no baseline and whose last improved shows the
    /// improvement (issue 34: such a week was painted "no baseline yet").
    pub fn severity(self) -> u8 {
        self as u8
    }
}

/// The display state of one run of one endpoint.
pub fn display_state(p: &RunPoint) -> DisplayState {
    match p.verdict {
        Verdict::Failed => DisplayState::Failed,
        Verdict::Regression if p.accepted_change => DisplayState::Accepted,
        Verdict::Regression => DisplayState::Regression,
        Verdict::Insufficient => DisplayState::Insufficient,
        Verdict::NoBaseline => DisplayState::NoBaseline,
        Verdict::Ok => DisplayState::Ok,
        Verdict::Improvement => DisplayState::Improvement,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_follows_the_worst_first_order() {
        for (i, s) in DisplayState::ALL.iter().enumerate() {
            assert_eq!(s.severity() as usize, i, "{s:?}");
        }
        let keys: std::collections::BTreeSet<&str> =
            DisplayState::ALL.iter().map(|s| s.key()).collect();
        assert_eq!(keys.len(), DisplayState::ALL.len());
    }
}
