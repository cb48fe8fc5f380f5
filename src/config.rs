//! `perfdash.toml`: archive-wide settings, every key optional.
//!
//! Defaults are documented in `docs/archive.md`; keep the two in step.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// The file name of the settings file at the archive root.
pub const SETTINGS_FILE: &str = "perfdash.toml";

/// Validated settings for one archive.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub analysis: AnalysisSettings,
    /// Per-endpoint settings keyed by endpoint id (the folder name).
    pub endpoints: BTreeMap<String, EndpointSettings>,
    /// Caps on what one input file may cost (gzip bombs, endless lines).
    pub limits: crate::ingest::limits::Limits,
}

/// How runs are judged.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct AnalysisSettings {
    /// Rounds a complete run has. A run with fewer is `insufficient`.
    pub expected_rounds: u32,
    /// A run regresses when its median p99 exceeds baseline × this ratio,
    /// and improves when it is below baseline ÷ this ratio.
    pub threshold_ratio: f64,
    /// The baseline is the median of the last this-many accepted runs' medians.
    pub baseline_window: usize,
    /// Fewer accepted runs than this before a run: its verdict is `no-baseline`.
    pub min_baseline_runs: usize,
    /// The k6 trend metric read from summaries.
    pub metric: String,
}

impl Default for AnalysisSettings {
    fn default() -> Self {
        AnalysisSettings {
            expected_rounds: 5,
            threshold_ratio: 1.15,
            baseline_window: 10,
            min_baseline_runs: 3,
            metric: "http_req_duration".to_string(),
        }
    }
}

/// Settings for one endpoint.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct EndpointSettings {
    /// A display name, e.g. `GET /api/orders`. Defaults to the id.
    pub name: Option<String>,
    /// Overrides `analysis.threshold_ratio` for this endpoint.
    pub threshold_ratio: Option<f64>,
}

impl Settings {
    /// Reads `perfdash.toml` from the archive root, or returns the defaults
    /// when there is none.
    pub fn load(archive_root: &Path) -> Result<Settings, Error> {
        let path = archive_root.join(SETTINGS_FILE);
        // Read like every archive file: no symbolic links, no FIFOs, capped.
        let text = match crate::ingest::limits::read_text_file(
            &path,
            &crate::ingest::limits::Limits::default(),
        ) {
            Ok(Some(text)) => text,
            Ok(None) => return Ok(Settings::default()),
            Err(source) => return Err(Error::Io { path, source }),
        };
        Settings::parse(&text, &path)
    }

    /// Parses and validates settings text; `path` is used in messages.
    pub fn parse(text: &str, path: &Path) -> Result<Settings, Error> {
        let settings: Settings =
            toml::from_str(text).map_err(|e| Error::at(path, toml_line(text, &e), e.message()))?;
        settings
            .validate()
            .map_err(|msg| Error::at(path, None, msg))?;
        Ok(settings)
    }

    fn validate(&self) -> Result<(), String> {
        let a = &self.analysis;
        if a.expected_rounds == 0 {
            return Err("analysis.expected_rounds must be at least 1".into());
        }
        check_ratio("analysis.threshold_ratio", a.threshold_ratio)?;
        if a.baseline_window == 0 {
            return Err("analysis.baseline_window must be at least 1".into());
        }
        if a.min_baseline_runs == 0 || a.min_baseline_runs > a.baseline_window {
            return Err(format!(
                "analysis.min_baseline_runs must be between 1 and baseline_window ({})",
                a.baseline_window
            ));
        }
        self.limits.validate()?;
        for (id, e) in &self.endpoints {
            if let Some(r) = e.threshold_ratio {
                check_ratio(&format!("endpoints.{id}.threshold_ratio"), r)?;
            }
        }
        Ok(())
    }

    /// The threshold ratio that applies to one endpoint.
    pub fn threshold_ratio(&self, endpoint: &str) -> f64 {
        self.endpoints
            .get(endpoint)
            .and_then(|e| e.threshold_ratio)
            .unwrap_or(self.analysis.threshold_ratio)
    }

    /// The display name of one endpoint.
    pub fn endpoint_name(&self, endpoint: &str) -> String {
        self.endpoints
            .get(endpoint)
            .and_then(|e| e.name.clone())
            .unwrap_or_else(|| endpoint.to_string())
    }
}

fn check_ratio(key: &str, r: f64) -> Result<(), String> {
    if !(r.is_finite() && r > 1.0) {
        return Err(format!("{key} must be a number greater than 1 (got {r})"));
    }
    Ok(())
}

/// The 1-based line a TOML error points at, if it has a span.
pub(crate) fn toml_line(text: &str, err: &toml::de::Error) -> Option<u64> {
    err.span().map(|span| {
        text[..span.start.min(text.len())]
            .bytes()
            .filter(|&b| b == b'\n')
            .count() as u64
            + 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply_without_a_file() {
        let s = Settings::parse("", Path::new("perfdash.toml")).unwrap();
        assert_eq!(s.analysis.expected_rounds, 5);
        assert_eq!(s.analysis.threshold_ratio, 1.15);
        assert_eq!(s.analysis.baseline_window, 10);
    }

    #[test]
    fn unknown_key_names_file_and_line() {
        let err = Settings::parse(
            "[analysis]\nexpected_round = 4\n",
            Path::new("a/perfdash.toml"),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("a/perfdash.toml:2:"), "{msg}");
        assert!(msg.contains("expected_round"), "{msg}");
    }

    #[test]
    fn ratio_must_exceed_one() {
        let err = Settings::parse("[analysis]\nthreshold_ratio = 0.9\n", Path::new("p.toml"))
            .unwrap_err();
        assert!(err.to_string().contains("greater than 1"));
    }

    #[test]
    fn endpoint_overrides() {
        let s = Settings::parse(
            "[endpoints.order-list]\nname = \"GET /orders\"\nthreshold_ratio = 1.3\n",
            Path::new("p.toml"),
        )
        .unwrap();
        assert_eq!(s.endpoint_name("order-list"), "GET /orders");
        assert_eq!(s.threshold_ratio("order-list"), 1.3);
        assert_eq!(s.threshold_ratio("other"), 1.15);
        assert_eq!(s.endpoint_name("other"), "other");
    }
}
