//! The values the cache keeps, as plain serde types: a run's record and
//! the index. `super::frame` writes them; nothing else knows their bytes.
//! A field added here, or a changed meaning, needs `frame::FORMAT`
//! bumped (files of another format are not read).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::Diagnostic;
use crate::model::{Round, StepSeries};

/// The head of a run's record file (the file entries follow it, read only
/// when the run is read by content).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunHead {
    /// The run folder's listing and its folders' (`ingest::listing`).
    pub listing: Option<Listing>,
    /// The run's rounds, under the identity of every file they were read
    /// from (`super::identity::RunIdentity`).
    pub rounds: Option<RecordedRounds>,
}

/// A run's rounds as read, for a build that finds the run's files as they
/// were (its identity unchanged): none of its files is opened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedRounds {
    pub identity: u128,
    pub endpoints: BTreeMap<String, Vec<Round>>,
    pub capacity: BTreeMap<String, StepSeries>,
}

/// A run folder's names, and those of the folders in it, each with the
/// stamp of the folder when it was listed: a folder whose stamp is as it
/// was holds the same names. Names are numbers into `names`, which holds
/// each name of the run once (a run's endpoint folders hold the same few
/// file names): at 120 endpoints × 3 years that is a quarter of the size.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Listing {
    pub names: Vec<String>,
    pub run: Listed,
    /// Each listed folder: its name's number and its listing.
    pub folders: Vec<(u32, Listed)>,
}

/// One folder's listing: the digest of its stamp (`None`: not to be
/// trusted next time) and its entries, each a name's number shifted left
/// by one, with the low bit set for a folder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Listed {
    pub stamp: Option<u128>,
    pub entries: Vec<u32>,
}

/// One file's result, kept by content: used for the file at `source` when
/// its bytes hash to `content` and the settings that decide its result to
/// `settings`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// What was read from the file (`round`, `steps`).
    pub kind: String,
    pub source: String,
    pub content: u128,
    pub settings: u128,
    /// The result, in postcard.
    pub value: Vec<u8>,
}

/// What the cache keeps for the whole output, beside the run records.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Index {
    /// The `changepoint` policy's judgements (`analyse::changepoint::known`).
    pub judgements: Option<Judgements>,
    /// The page memo (`write::memo`).
    pub pages: Option<Pages>,
    /// The published site (`write::fresh`).
    pub site: Option<SiteState>,
}

/// Each series' judgements by its key, made by the perfdash `salt` names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Judgements {
    pub salt: u128,
    pub series: Vec<(u128, Vec<Judgement>)>,
}

/// One run's `changepoint` judgement (`analyse::changepoint::OnlineJudgement`):
/// over the line, it keeps the change point and the one before it, from
/// which the alarm is dated (issue 33).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Judgement {
    NotJudged,
    Within,
    Over { change: u32, level_from: u32 },
}

/// Each memoised page's files by the page's key, made by the perfdash
/// `salt` names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pages {
    pub salt: u128,
    pub pages: Vec<(u128, Vec<PublishedFile>)>,
}

/// One published file of a memoised page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishedFile {
    /// Relative to the site root, with `/`.
    pub path: String,
    pub size: u64,
    /// xxh3-128 of its bytes (the manifest's hash).
    pub hash: u128,
    /// Its `crate::stat_stamp` numbers once published.
    pub stamp: [i64; 7],
}

/// The site a build published, and from what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiteState {
    /// The fingerprint of the build's inputs.
    pub inputs: u128,
    pub summary: SiteSummary,
    /// Every file of the site, in path order, with its `stat` numbers.
    pub files: Vec<(String, [i64; 7])>,
}

/// What a build reported, kept to be reported again by a build that finds
/// the site up to date.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiteSummary {
    pub runs: usize,
    pub endpoints: usize,
    pub round_files: usize,
    pub pages: usize,
    pub files: usize,
    pub bytes: u64,
    pub latest_regressions: usize,
    /// Endpoints whose latest run failed.
    pub latest_failures: usize,
    pub diagnostics: Vec<Diagnostic>,
}
