//! Go pprof profiles (`runtime/pprof.StartCPUProfile`, `/debug/pprof/profile`,
//! `go test -cpuprofile`): gzipped `profile.proto` messages.
//!
//! Decoded with prost (the protobuf crate of the tokio project) into the
//! messages below, written out by hand from google/pprof's
//! `proto/profile.proto` with only the fields perfdash reads, so no
//! `protoc` is needed to build. A sample lists its locations leaf first; a
//! location lists its lines innermost first (inlined calls before the
//! function they were inlined into). A CPU profile's weights are its
//! samples (`samples/count`); another kind of profile (heap, goroutine,
//! mutex, block) is read only when the file name gives that kind, by its
//! default sample type.

use std::collections::HashMap;
use std::path::Path;

use prost::Message;

use super::{Profile, ProfileFormat};
use crate::error::Error;

#[derive(Clone, PartialEq, Message)]
pub(crate) struct PprofProfile {
    #[prost(message, repeated, tag = "1")]
    sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    string_table: Vec<String>,
    #[prost(message, optional, tag = "11")]
    period_type: Option<ValueType>,
    #[prost(int64, tag = "14")]
    default_sample_type: i64,
}

#[derive(Clone, PartialEq, Message)]
struct ValueType {
    #[prost(int64, tag = "1")]
    r#type: i64,
    #[prost(int64, tag = "2")]
    unit: i64,
}

#[derive(Clone, PartialEq, Message)]
struct Sample {
    #[prost(uint64, repeated, tag = "1")]
    location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    value: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
struct Mapping {
    #[prost(uint64, tag = "1")]
    id: u64,
    #[prost(int64, tag = "5")]
    filename: i64,
}

#[derive(Clone, PartialEq, Message)]
struct Location {
    #[prost(uint64, tag = "1")]
    id: u64,
    #[prost(uint64, tag = "2")]
    mapping_id: u64,
    #[prost(uint64, tag = "3")]
    address: u64,
    #[prost(message, repeated, tag = "4")]
    line: Vec<Line>,
}

#[derive(Clone, PartialEq, Message)]
struct Line {
    #[prost(uint64, tag = "1")]
    function_id: u64,
}

#[derive(Clone, PartialEq, Message)]
struct Function {
    #[prost(uint64, tag = "1")]
    id: u64,
    #[prost(int64, tag = "2")]
    name: i64,
}

/// The decoded message when `bytes` (already gunzipped) is a pprof
/// profile: it decodes, its string table starts with the empty string as
/// the format requires, and it names its sample types. Random binary
/// data rarely decodes as protobuf and never passes all three.
pub(crate) fn decode(bytes: &[u8]) -> Option<PprofProfile> {
    let p = PprofProfile::decode(bytes).ok()?;
    let strings_ok = p.string_table.first().is_some_and(String::is_empty);
    let types_ok = !p.sample_type.is_empty()
        && p.sample_type.iter().all(|t| {
            usize::try_from(t.r#type).is_ok_and(|i| i > 0 && i < p.string_table.len())
                && usize::try_from(t.unit).is_ok_and(|i| i < p.string_table.len())
        });
    (strings_ok && types_ok).then_some(p)
}

/// Reads a decoded profile (see [`decode`]).
pub(crate) fn parse(p: &PprofProfile, path: &Path, kind: &str) -> Result<Profile, Error> {
    let err = |m: String| Error::at(path, None, m);
    let string = |i: i64| -> Result<&str, Error> {
        usize::try_from(i)
            .ok()
            .and_then(|i| p.string_table.get(i))
            .map(String::as_str)
            .ok_or_else(|| err(format!("pprof string {i} does not exist")))
    };
    let mut types = Vec::new();
    for t in &p.sample_type {
        types.push((string(t.r#type)?, string(t.unit)?));
    }
    let is_cpu = types.iter().any(|(t, _)| *t == "cpu")
        || p.period_type
            .as_ref()
            .is_some_and(|t| string(t.r#type).ok() == Some("cpu"));
    let count_index = types
        .iter()
        .position(|(t, u)| *t == "samples" && *u == "count");
    let (value_index, units, counts_samples) = if is_cpu {
        match count_index {
            Some(i) => (i, "samples".to_string(), true),
            None => {
                let i = types.iter().position(|(t, _)| *t == "cpu").unwrap_or(0);
                (i, types[i].1.to_string(), false)
            }
        }
    } else if kind == super::DEFAULT_KIND {
        let listed: Vec<String> = types.iter().map(|(t, u)| format!("{t}/{u}")).collect();
        return Err(err(format!(
            "a Go {} profile (sample types {}), not a CPU profile: name the file \
             flame.{}.<ext> to file it as that kind, or file a CPU profile \
             (pprof.StartCPUProfile, /debug/pprof/profile)",
            describe_kind(&types),
            listed.join(", "),
            match describe_kind(&types) {
                "mutex or block" => "mutex",
                "non-CPU" => "<kind>",
                k => k,
            }
        )));
    } else {
        let default = string(p.default_sample_type).ok().filter(|s| !s.is_empty());
        let i = default
            .and_then(|d| types.iter().position(|(t, _)| *t == d))
            .unwrap_or(types.len() - 1);
        let units = match types[i].1 {
            "count" => "samples".to_string(),
            u => u.to_string(),
        };
        let counts = units == "samples";
        (i, units, counts)
    };
    let locations = location_frames(p, &err)?;
    let mut profile = Profile::empty(kind, ProfileFormat::Pprof);
    profile.units = units;
    let mut samples = 0u64;
    let mut stack = String::new();
    for s in &p.sample {
        let Some(&weight) = s.value.get(value_index) else {
            return Err(err(format!(
                "a pprof sample with {} values where the profile has {} sample types",
                s.value.len(),
                types.len()
            )));
        };
        stack.clear();
        for id in s.location_id.iter().rev() {
            let frames = locations.get(id).ok_or_else(|| {
                err(format!(
                    "a pprof sample names location {id}, which does not exist"
                ))
            })?;
            for f in frames.iter().rev() {
                if !stack.is_empty() {
                    stack.push(';');
                }
                stack.push_str(f);
            }
        }
        if let Some(i) = count_index
            && let Some(&n) = s.value.get(i)
        {
            samples = samples.saturating_add(u64::try_from(n).unwrap_or(0));
        }
        profile.add(&stack, weight as f64);
    }
    if counts_samples || count_index.is_some() {
        profile.samples = Some(samples);
    }
    if profile.total == 0.0 {
        profile
            .warnings
            .push("the pprof profile holds no samples".to_string());
    }
    Ok(profile)
}

/// Each location's frames, innermost first, as folded-stack names.
fn location_frames(
    p: &PprofProfile,
    err: &dyn Fn(String) -> Error,
) -> Result<HashMap<u64, Vec<String>>, Error> {
    let string = |i: i64| -> Result<&str, Error> {
        usize::try_from(i)
            .ok()
            .and_then(|i| p.string_table.get(i))
            .map(String::as_str)
            .ok_or_else(|| err(format!("pprof string {i} does not exist")))
    };
    let functions: HashMap<u64, &str> = p
        .function
        .iter()
        .map(|f| Ok((f.id, string(f.name)?)))
        .collect::<Result<_, Error>>()?;
    let mappings: HashMap<u64, &str> = p
        .mapping
        .iter()
        .map(|m| Ok((m.id, string(m.filename)?)))
        .collect::<Result<_, Error>>()?;
    let mut locations: HashMap<u64, Vec<String>> = HashMap::with_capacity(p.location.len());
    for loc in &p.location {
        let mut frames = Vec::with_capacity(loc.line.len().max(1));
        for line in &loc.line {
            let name = functions.get(&line.function_id).ok_or_else(|| {
                err(format!(
                    "pprof location {} names function {}, which does not exist",
                    loc.id, line.function_id
                ))
            })?;
            frames.push(name.replace(';', ":"));
        }
        if frames.is_empty() {
            // Not symbolised: the address, and the binary it is in.
            let binary = mappings
                .get(&loc.mapping_id)
                .and_then(|f| f.rsplit('/').next())
                .filter(|f| !f.is_empty());
            frames.push(match binary {
                Some(b) => format!("{b}+0x{:x}", loc.address),
                None => format!("0x{:x}", loc.address),
            });
        }
        locations.insert(loc.id, frames);
    }
    Ok(locations)
}

/// "heap", "goroutine", … from a profile's sample types.
fn describe_kind(types: &[(&str, &str)]) -> &'static str {
    let has = |name: &str| types.iter().any(|(t, _)| *t == name);
    if has("alloc_space") || has("inuse_space") || has("alloc_objects") {
        "heap"
    } else if has("goroutine") {
        "goroutine"
    } else if has("contentions") || has("delay") {
        "mutex or block"
    } else if has("threadcreate") {
        "threadcreate"
    } else {
        "non-CPU"
    }
}
