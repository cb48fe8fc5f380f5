//! async-profiler HTML flame graphs, all three encodings (FORMATS.md §5.3).
//!
//! The frames are read in document order (a pre-order walk of the tree) and
//! turned back into folded stacks the way `one.convert.FlameGraph.parseHtml`
//! does: keep the open frame per level; when a frame closes, its self weight is
//! its width minus its children's widths. Level 0 is `all`; its self weight
//! (samples with an empty stack) is kept as [`Profile::root_self`], so
//! [`Profile::total`] equals the page's own total. Frames under the page's
//! `--minwidth` are absent from the page, so the sums are lower bounds.

use std::path::Path;

use super::{Profile, ProfileFormat, Stack};
use crate::error::Error;

/// Frame-type ids of the 7-entry palette (v2.8+ and v3/v4), `vmEntry.h`
/// `FrameTypeId`: 0 interpreted, 1 JIT, 2 inlined, 3 native, 4 C++, 5 kernel, 6 C1.
const KERNEL_TYPE_7: u64 = 5;
/// The v2.0–2.7 5-entry palette: 0 Java, 1 inlined, 2 kernel, 3 C++, 4 native.
const KERNEL_TYPE_5: u64 = 2;

/// One frame as drawn: depth, width and name.
struct Frame {
    level: usize,
    width: f64,
    name: String,
}

pub(super) fn parse(text: &str, path: &Path, kind: &str) -> Result<Profile, Error> {
    if !text.contains("function f(") {
        return Err(Error::at(
            path,
            None,
            "an HTML file that is not an async-profiler flame graph (no `function f(` in its script)",
        ));
    }
    let (format, frames) = if let Some(cpool_at) = text.find("const cpool = [") {
        (
            ProfileFormat::AsyncProfilerHtmlV3,
            parse_v3(text, cpool_at, path)?,
        )
    } else {
        let palette = palette_len(text);
        let (format, kernel) = if palette == Some(7) {
            (ProfileFormat::AsyncProfilerHtmlV28, KERNEL_TYPE_7)
        } else {
            (ProfileFormat::AsyncProfilerHtmlV2, KERNEL_TYPE_5)
        };
        (format, parse_v2(text, kernel, path)?)
    };
    let mut profile = Profile::empty(kind, format);
    if let Some(units) = units(text) {
        profile.units = units;
    }
    fold(frames, &mut profile, path)?;
    // A page in bytes or ns (v4 `--total`) does not say how many samples it holds.
    profile.count_weights_as_samples();
    Ok(profile)
}

/// Rebuilds folded stacks from frames in pre-order.
fn fold(frames: Vec<(u64, Frame)>, profile: &mut Profile, path: &Path) -> Result<(), Error> {
    struct Open {
        name: String,
        width: f64,
        children: f64,
    }
    let mut open: Vec<Open> = Vec::new();
    let close = |open: &mut Vec<Open>, profile: &mut Profile| {
        let node = open
            .pop()
            .expect("close is only called on a non-empty stack");
        let own = node.width - node.children;
        if open.is_empty() {
            // `all`: the page's total and the samples with no stack.
            profile.total += node.width;
            if own > 0.0 {
                profile.root_self += own;
            }
        } else if own > 0.0 {
            let mut stack = String::new();
            for (i, f) in open.iter().skip(1).enumerate() {
                if i > 0 {
                    stack.push(';');
                }
                stack.push_str(&f.name);
            }
            if !stack.is_empty() {
                stack.push(';');
            }
            stack.push_str(&node.name);
            *profile.stacks.entry(Stack::from(stack)).or_insert(0.0) += own;
        }
    };
    for (line, frame) in frames {
        if frame.level > open.len() {
            return Err(Error::at(
                path,
                Some(line),
                format!(
                    "frame `{}` at level {} has no parent at level {}",
                    frame.name,
                    frame.level,
                    frame.level.saturating_sub(1)
                ),
            ));
        }
        while open.len() > frame.level {
            close(&mut open, profile);
        }
        if let Some(parent) = open.last_mut() {
            parent.children += frame.width;
        }
        open.push(Open {
            name: frame.name,
            width: frame.width,
            children: 0.0,
        });
    }
    while !open.is_empty() {
        close(&mut open, profile);
    }
    Ok(())
}

/// v3/v4: the prefix-compressed `cpool`, then `f/u/n` calls after `unpack(cpool);`.
fn parse_v3(text: &str, cpool_at: usize, path: &Path) -> Result<Vec<(u64, Frame)>, Error> {
    let line_of = |offset: usize| text[..offset].bytes().filter(|&b| b == b'\n').count() as u64 + 1;
    let body = &text[cpool_at..];
    let first_line = line_of(cpool_at);
    let mut lines = body
        .lines()
        .enumerate()
        .map(|(i, l)| (first_line + i as u64, l));
    lines.next(); // `const cpool = [`

    // Decoded names as UTF-16 units, because the prefix lengths count JS string units.
    let mut pool: Vec<String> = Vec::new();
    let mut previous: Vec<u16> = Vec::new();
    let mut closed = false;
    for (line_no, line) in lines.by_ref() {
        let line = line.trim();
        if line.starts_with("];") {
            closed = true;
            break;
        }
        let literal = line.strip_suffix(',').unwrap_or(line);
        let value = js_string(literal)
            .ok_or_else(|| Error::at(path, Some(line_no), "cpool entry is not a quoted string"))?;
        let units: Vec<u16> = value.encode_utf16().collect();
        let name: Vec<u16> = if pool.is_empty() {
            units
        } else {
            let Some((&first, rest)) = units.split_first() else {
                return Err(Error::at(path, Some(line_no), "empty cpool entry"));
            };
            let keep = usize::from(first)
                .checked_sub(32)
                .filter(|&k| k <= previous.len())
                .ok_or_else(|| {
                    Error::at(
                        path,
                        Some(line_no),
                        "cpool entry's shared-prefix length is out of range",
                    )
                })?;
            let mut name = previous[..keep].to_vec();
            name.extend_from_slice(rest);
            name
        };
        pool.push(String::from_utf16_lossy(&name));
        previous = name;
    }
    if !closed {
        return Err(Error::at(
            path,
            Some(first_line),
            "cpool is not closed by `];`",
        ));
    }

    let mut frames = Vec::new();
    let (mut level0, mut width0) = (0usize, 0f64);
    let mut started = false;
    for (line_no, line) in lines {
        let line = line.trim();
        if !started {
            started = line.starts_with("unpack(cpool)");
            continue;
        }
        if line.is_empty() || line.starts_with("d=") {
            continue; // `d=<n>` lines carry differential deltas (v4); widths are unchanged
        }
        let Some((call, args)) = call_args(line) else {
            break; // `search();` and the rest of the script
        };
        if !matches!(call, "f" | "u" | "n") {
            break;
        }
        let nums = args
            .split(',')
            .map(|a| {
                let a = a.trim();
                if a == "U" { Ok(0.0) } else { a.parse::<f64>() }
            })
            .collect::<Result<Vec<f64>, _>>()
            .map_err(|_| {
                Error::at(
                    path,
                    Some(line_no),
                    format!("`{call}(…)` has a non-numeric argument"),
                )
            })?;
        let arg = |i: usize| nums.get(i).copied().unwrap_or(0.0);
        let key = arg(0) as u64;
        // JS: f(key, level, left, width) sets left0 += left and width0 = width || width0;
        // u = f(key, level0 + 1, 0, width); n = f(key, level0, width0, width).
        let (level, left, width) = match call {
            "f" => (arg(1) as usize, arg(2), arg(3)),
            "u" => (level0 + 1, 0.0, arg(1)),
            _ => (level0, width0, arg(1)),
        };
        // `left` (the x offset) is implied by the pre-order walk, so it is not tracked.
        let _ = left;
        level0 = level;
        if width != 0.0 {
            width0 = width;
        }
        let name = pool.get((key >> 3) as usize).ok_or_else(|| {
            Error::at(
                path,
                Some(line_no),
                format!("frame key {key} is outside the cpool"),
            )
        })?;
        frames.push((
            line_no,
            Frame {
                level,
                width: width0,
                name: with_suffix(name, key & 7, KERNEL_TYPE_7),
            },
        ));
    }
    Ok(frames)
}

/// v2.x: one `f(level,left,width,type,'title'[,inln,c1,int])` per frame.
fn parse_v2(text: &str, kernel_type: u64, path: &Path) -> Result<Vec<(u64, Frame)>, Error> {
    let mut frames = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with("f(") {
            continue;
        }
        let line_no = i as u64 + 1;
        let bad = || {
            Error::at(
                path,
                Some(line_no),
                "unreadable frame call `f(level,left,width,type,'title')`",
            )
        };
        let inner = line.strip_prefix("f(").ok_or_else(bad)?;
        let quote = inner.find('\'').ok_or_else(bad)?;
        let nums: Vec<f64> = inner[..quote]
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        let [level, _left, width, kind] = nums[..] else {
            return Err(bad());
        };
        let (title, _) = js_string_prefix(&inner[quote..]).ok_or_else(bad)?;
        frames.push((
            line_no,
            Frame {
                level: level as usize,
                width,
                name: with_suffix(&title, kind as u64, kernel_type),
            },
        ));
    }
    if frames.is_empty() {
        return Err(Error::at(path, None, "async-profiler HTML without frames"));
    }
    Ok(frames)
}

/// Restores the `_[k]` suffix on kernel frames, as async-profiler's own
/// collapsed output always writes it (`symbols_linux.cpp`). The other
/// annotations (`_[j]`, `_[i]`, …) appear in collapsed output only with `--ann`,
/// so they are left off: the same profile then has the same frame names
/// whether it was archived as HTML or as collapsed text, which is what the
/// baseline diff needs.
fn with_suffix(name: &str, frame_type: u64, kernel_type: u64) -> String {
    if frame_type == kernel_type && !name.ends_with("_[k]") {
        format!("{name}_[k]")
    } else {
        name.to_string()
    }
}

/// The number of entries in `const palette = [ … ];`.
fn palette_len(text: &str) -> Option<usize> {
    let start = text.find("const palette = [")?;
    let body = &text[start..];
    let end = body.find("];")?;
    Some(body[..end].matches("[0x").count())
}

/// v4's `const units = 'samples|bytes|ns';`.
fn units(text: &str) -> Option<String> {
    let start = text.find("const units = ")? + "const units = ".len();
    let (value, _) = js_string_prefix(&text[start..])?;
    (!value.is_empty()).then_some(value)
}

/// `name(args)` → `(name, args)`.
fn call_args(line: &str) -> Option<(&str, &str)> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    (close > open).then(|| (&line[..open], &line[open + 1..close]))
}

/// A whole single-quoted JS string literal → its value.
fn js_string(literal: &str) -> Option<String> {
    let (value, rest) = js_string_prefix(literal)?;
    rest.trim().is_empty().then_some(value)
}

/// A single-quoted JS string literal at the start of `s` → (value, rest).
/// async-profiler escapes `\` and `'` with a backslash.
fn js_string_prefix(s: &str) -> Option<(String, &str)> {
    let mut chars = s.char_indices();
    if chars.next()?.1 != '\'' {
        return None;
    }
    let mut value = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                let (_, escaped) = chars.next()?;
                value.push(match escaped {
                    'n' => '\n',
                    't' => '\t',
                    other => other,
                });
            }
            '\'' => return Some((value, &s[i + 1..])),
            other => value.push(other),
        }
    }
    None
}
