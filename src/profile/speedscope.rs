//! speedscope JSON (`https://www.speedscope.app/file-format-schema.json`).
//!
//! All profiles in the file are summed into one (py-spy and others write one
//! profile per thread); profiles in a unit other than the first one's are
//! skipped with a warning, since bytes and seconds cannot be added.
//! `sampled` profiles give stacks root→leaf with weights; `evented` profiles
//! give open/close events, and each stack is weighted by the time it was on top.

use std::path::Path;

use serde::Deserialize;

use super::{Profile, ProfileFormat};
use crate::error::Error;

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    shared: Shared,
    #[serde(default)]
    profiles: Vec<serde_json::Value>,
}

#[derive(Deserialize, Default)]
struct Shared {
    #[serde(default)]
    frames: Vec<FrameInfo>,
}

#[derive(Deserialize)]
struct FrameInfo {
    name: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    line: Option<u64>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum SpeedscopeProfile {
    Sampled {
        #[serde(default)]
        name: String,
        #[serde(default = "none_unit")]
        unit: String,
        samples: Vec<Vec<usize>>,
        weights: Vec<f64>,
    },
    Evented {
        #[serde(default)]
        name: String,
        #[serde(default = "none_unit")]
        unit: String,
        events: Vec<Event>,
    },
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    at: f64,
    frame: usize,
}

fn none_unit() -> String {
    "none".to_string()
}

pub(super) fn parse(text: &str, path: &Path, kind: &str) -> Result<Profile, Error> {
    let file: File = serde_json::from_str(text).map_err(|e| {
        Error::at(
            path,
            Some(e.line() as u64),
            format!("not a speedscope profile (the only JSON profile format read): {e}"),
        )
    })?;
    if !text.contains("speedscope") && file.profiles.is_empty() {
        return Err(Error::at(
            path,
            None,
            "JSON without speedscope `profiles`: not a profile perfdash reads",
        ));
    }
    // Frame names as py-spy's folded output writes them: `func (file:line)`.
    let names: Vec<String> = file
        .shared
        .frames
        .iter()
        .map(|f| match (&f.file, f.line) {
            (Some(file), Some(line)) => format!("{} ({file}:{line})", f.name),
            (Some(file), None) => format!("{} ({file})", f.name),
            _ => f.name.clone(),
        })
        .collect();
    let mut profile = Profile::empty(kind, ProfileFormat::Speedscope);
    let mut unit: Option<String> = None;
    let mut sample_count: Option<u64> = None;
    let mut evented = false;
    for (index, value) in file.profiles.into_iter().enumerate() {
        let parsed: SpeedscopeProfile = match serde_json::from_value(value) {
            Ok(p) => p,
            Err(e) => {
                profile.skipped += 1;
                profile.warnings.push(format!(
                    "profile {index}: skipped, not a sampled or evented profile: {e}"
                ));
                continue;
            }
        };
        let (name, this_unit) = match &parsed {
            SpeedscopeProfile::Sampled { name, unit, .. }
            | SpeedscopeProfile::Evented { name, unit, .. } => (name.clone(), unit.clone()),
        };
        match &unit {
            None => unit = Some(this_unit.clone()),
            Some(u) if *u != this_unit => {
                profile.skipped += 1;
                profile.warnings.push(format!(
                    "profile {index} ({name}): skipped, its unit {this_unit} differs from {u}"
                ));
                continue;
            }
            Some(_) => {}
        }
        let stack_of = |frames: &[usize]| -> Result<String, Error> {
            let mut stack = String::new();
            for (i, &f) in frames.iter().enumerate() {
                let name = names.get(f).ok_or_else(|| {
                    Error::at(
                        path,
                        None,
                        format!(
                            "profile {index} ({name}) refers to frame {f}, which does not exist"
                        ),
                    )
                })?;
                if i > 0 {
                    stack.push(';');
                }
                stack.push_str(name);
            }
            Ok(stack)
        };
        match parsed {
            SpeedscopeProfile::Sampled {
                samples, weights, ..
            } => {
                if samples.len() != weights.len() {
                    return Err(Error::at(
                        path,
                        None,
                        format!(
                            "profile {index} ({name}): {} samples but {} weights",
                            samples.len(),
                            weights.len()
                        ),
                    ));
                }
                for (sample, weight) in samples.iter().zip(weights) {
                    profile.add(&stack_of(sample)?, weight);
                }
                *sample_count.get_or_insert(0) += samples.len() as u64;
            }
            SpeedscopeProfile::Evented { events, .. } => {
                // Events are exact times, not samples: no count to give.
                evented = true;
                let mut open: Vec<usize> = Vec::new();
                let mut last_at: Option<f64> = None;
                for (i, event) in events.iter().enumerate() {
                    if let (Some(last), false) = (last_at, open.is_empty()) {
                        profile.add(&stack_of(&open)?, event.at - last);
                    }
                    last_at = Some(event.at);
                    match event.kind.as_str() {
                        "O" => open.push(event.frame),
                        "C" => {
                            if open.last() != Some(&event.frame) {
                                return Err(Error::at(
                                    path,
                                    None,
                                    format!(
                                        "profile {index} ({name}): event {i} closes frame {} which is not open on top",
                                        event.frame
                                    ),
                                ));
                            }
                            open.pop();
                        }
                        other => {
                            return Err(Error::at(
                                path,
                                None,
                                format!(
                                    "profile {index} ({name}): event {i} has unknown type {other:?}"
                                ),
                            ));
                        }
                    }
                }
            }
        }
    }
    // A unitless sampled profile weighs samples; a unitless evented one
    // measures time in units of its own, which are not samples.
    profile.units = match unit.as_deref() {
        None | Some("none") if evented => "units".to_string(),
        None | Some("none") => "samples".to_string(),
        Some(u) => u.to_string(),
    };
    // py-spy weighs each sample by its interval in seconds; the samples
    // themselves are what sampling noise depends on.
    profile.samples = if evented { None } else { sample_count };
    if profile.samples.is_none() && !evented {
        profile.samples = Some(0);
    }
    Ok(profile)
}
