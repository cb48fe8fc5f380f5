//! py-spy's `--format chrometrace`: Chrome trace events, one `B` (begin)
//! event when a frame appears in a thread's sampled stack and one `E` (end)
//! when it leaves, at the sample's time in µs (`src/chrometrace.rs` in
//! py-spy). Replayed per thread: the time until a thread's next event
//! belongs to the stack open before it, so weights are **seconds** and the
//! file records no sample count. A thread that goes idle keeps its last
//! stack open until its next sample (py-spy writes nothing for idle
//! samples), so `--format raw` or `speedscope` count samples exactly where
//! this cannot. A frame is `name (file:line)`, as py-spy's own folded
//! output writes it, so the same rules classify both.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::{Profile, ProfileFormat};
use crate::error::Error;

#[derive(Deserialize)]
struct Event {
    ph: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    pid: i64,
    #[serde(default)]
    tid: i64,
    #[serde(default)]
    ts: f64,
    #[serde(default)]
    args: Args,
}

#[derive(Deserialize, Default)]
struct Args {
    #[serde(default)]
    filename: Option<String>,
    #[serde(default)]
    line: Option<i64>,
}

/// Whether a JSON document's first bytes look like a Chrome trace of
/// begin/end events (py-spy's, or any sampler's with the same shape).
pub(crate) fn looks_like(head: &str) -> bool {
    let t = head.trim_start();
    t.starts_with('[')
        && t.contains("\"ph\"")
        && (t.contains("\"B\"") || t.contains("\"E\""))
        && t.contains("\"ts\"")
}

pub(crate) fn parse(text: &str, path: &Path, kind: &str) -> Result<Profile, Error> {
    let events: Vec<Event> = serde_json::from_str(text).map_err(|e| {
        Error::at(
            path,
            Some(e.line() as u64),
            format!("not a Chrome trace (a JSON array of events): {e}"),
        )
    })?;
    let mut profile = Profile::empty(kind, ProfileFormat::ChromeTrace);
    profile.units = "seconds".to_string();
    let mut open: HashMap<(i64, i64), (Vec<String>, f64)> = HashMap::new();
    let mut unmatched = 0usize;
    let mut stack = String::new();
    for e in &events {
        if e.ph != "B" && e.ph != "E" {
            continue;
        }
        if !e.ts.is_finite() {
            return Err(Error::at(path, None, "an event time that is not a number"));
        }
        let (frames, last) = open
            .entry((e.pid, e.tid))
            .or_insert_with(|| (Vec::new(), e.ts));
        if !frames.is_empty() && e.ts > *last {
            stack.clear();
            for (i, f) in frames.iter().enumerate() {
                if i > 0 {
                    stack.push(';');
                }
                stack.push_str(f);
            }
            profile.add(&stack, (e.ts - *last) / 1e6);
        }
        *last = e.ts;
        if e.ph == "B" {
            let frame = match (&e.args.filename, e.args.line) {
                (Some(file), Some(line)) => format!("{} ({file}:{line})", e.name),
                (Some(file), None) if !file.is_empty() => format!("{} ({file})", e.name),
                _ => e.name.clone(),
            };
            frames.push(frame.replace(';', ":"));
        } else if frames.pop().is_none() {
            unmatched += 1;
        }
    }
    if events.iter().all(|e| e.ph != "B") {
        return Err(Error::at(
            path,
            None,
            "a Chrome trace without begin (B) events: nothing was sampled",
        ));
    }
    if unmatched > 0 {
        profile.warnings.push(format!(
            "{unmatched} end events without a begin were passed over"
        ));
    }
    Ok(profile)
}
