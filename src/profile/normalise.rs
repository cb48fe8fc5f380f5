//! Frame names that survive a redeploy.
//!
//! Two profiles of the same code taken from different builds name the same
//! function differently: py-spy writes `quote (/srv/app/v1/shop.py:82)`, and
//! after a deploy to `/srv/app/v2` with one line added above it,
//! `quote (/srv/app/v2/shop.py:83)`. Compared as they are, every frame whose
//! line moved reads as new, and one function splits into one row per line.
//! Before profiles are diffed, frame names are therefore normalised (by
//! default): line numbers and directories are dropped, and the names the JVM
//! makes up per process (lambda and reflection classes) lose their serial
//! numbers. `[profiles] keep_lines = true` keeps names as they are (apart
//! from annotation suffixes, which are always removed).

use std::borrow::Cow;

use serde::Serialize;

use super::classify::strip_annotation;

/// How frame names are compared across profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Normalisation {
    /// Function names: line numbers, directories and per-process serial
    /// numbers dropped (the default).
    Functions,
    /// Names as the profiler wrote them (`[profiles] keep_lines = true`).
    Lines,
}

impl Normalisation {
    /// From `[profiles] keep_lines`.
    pub fn from_keep_lines(keep_lines: bool) -> Normalisation {
        if keep_lines {
            Normalisation::Lines
        } else {
            Normalisation::Functions
        }
    }

    /// One sentence for pages and terminals.
    pub fn describe(self) -> &'static str {
        match self {
            Normalisation::Functions => {
                "frames are compared by function: line numbers and directories are dropped \
                 ([profiles] keep_lines = true keeps them)"
            }
            Normalisation::Lines => {
                "frames are compared as written, with line numbers and directories \
                 ([profiles] keep_lines = true)"
            }
        }
    }

    /// The name a frame is compared by. Annotation suffixes (`_[j]`, `_[k]`,
    /// …) are always removed.
    pub fn frame(self, raw: &str) -> Cow<'_, str> {
        let name = strip_annotation(raw);
        match self {
            Normalisation::Lines => Cow::Borrowed(name),
            Normalisation::Functions => function_name(name),
        }
    }

    /// A whole `root;…;leaf` stack, frame by frame.
    pub fn stack(self, raw: &str) -> String {
        let mut out = String::with_capacity(raw.len());
        for (i, frame) in raw.split(';').enumerate() {
            if i > 0 {
                out.push(';');
            }
            out.push_str(&self.frame(frame));
        }
        out
    }
}

/// Drops what changes between builds of the same function.
fn function_name(name: &str) -> Cow<'_, str> {
    if let Some(thread) = thread_or_process_frame(name) {
        return Cow::Owned(thread);
    }
    let mut out = Cow::Borrowed(name);
    if let Some(located) = without_location_details(&out) {
        out = Cow::Owned(located);
    } else if let Some(cut) = trailing_line_number(&out) {
        out = Cow::Owned(out[..cut].to_string());
    } else if out.starts_with('/') && !out.contains(' ') {
        // A bare path (perf names an unknown symbol by its object file).
        if let Some(base) = out.rsplit('/').next().filter(|b| !b.is_empty()) {
            out = Cow::Owned(base.to_string());
        }
    }
    if let Some(plain) = without_serial_numbers(&out) {
        out = Cow::Owned(plain);
    }
    out
}

/// Root frames naming a thread or process carry ids that change every run:
/// async-profiler `-t` writes `[pool-1-thread-3 tid=12345]`, py-spy
/// `--threads` `thread (0x7f3a1c2d3700): worker` and `--subprocesses`
/// `process 4242:"python app.py"`.
fn thread_or_process_frame(name: &str) -> Option<String> {
    if let Some(inner) = name.strip_prefix('[').and_then(|n| n.strip_suffix(']'))
        && let Some(at) = inner.rfind(" tid=")
        && inner[at + 5..].bytes().all(|b| b.is_ascii_digit())
    {
        return Some(format!("[{}]", &inner[..at]));
    }
    if let Some(rest) = name.strip_prefix("thread (0x")
        && let Some(close) = rest.find(')')
        && rest[..close].bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Some(format!("thread{}", &rest[close + 1..]));
    }
    if let Some(rest) = name.strip_prefix("process ")
        && let Some(colon) = rest.find(':')
        && colon > 0
        && rest[..colon].bytes().all(|b| b.is_ascii_digit())
    {
        return Some(format!("process{}", &rest[colon..]));
    }
    None
}

/// `func (dir/file.py:12)` → `func (file.py)`: py-spy's (and speedscope's)
/// `name (location)` form. `None` when the name is not of that form or
/// nothing changes.
fn without_location_details(name: &str) -> Option<String> {
    let inner = name.strip_suffix(')')?;
    let open = inner.rfind(" (")?;
    let (func, location) = (&inner[..open], &inner[open + 2..]);
    if func.is_empty() || location.is_empty() {
        return None;
    }
    let file = match trailing_line_number(location) {
        Some(cut) => &location[..cut],
        None => location,
    };
    let file = base_name(file);
    (file.len() != location.len()).then(|| format!("{func} ({file})"))
}

/// The file name without its directories; a package's `__init__.py` or
/// `__main__.py` keeps its folder (`json/__init__.py`), or every package's
/// `__init__` would be one frame.
fn base_name(path: &str) -> &str {
    let mut parts = path.rsplit(['/', '\\']);
    let file = parts.next().unwrap_or(path);
    if matches!(file, "__init__.py" | "__main__.py")
        && let Some(folder) = parts.next().filter(|f| !f.is_empty())
    {
        let start = path.len() - file.len() - 1 - folder.len();
        return &path[start..];
    }
    file
}

/// Where a trailing `:line` or `:line:column` starts (`Foo.bar:42`,
/// `handler app.js:10:5`), when the name has one.
fn trailing_line_number(name: &str) -> Option<usize> {
    let mut end = name.len();
    let mut cut = None;
    for _ in 0..2 {
        let head = &name[..end];
        let Some(colon) = head.rfind(':') else {
            break;
        };
        let digits = &head[colon + 1..];
        // `::` is a C++/Rust path, not a line number.
        if digits.is_empty()
            || !digits.bytes().all(|b| b.is_ascii_digit())
            || colon == 0
            || head.as_bytes()[colon - 1] == b':'
        {
            break;
        }
        cut = Some(colon);
        end = colon;
    }
    cut
}

/// Names the JVM generates per process: `Foo$$Lambda$123/0x0000000800c0b000.run`
/// and `Foo$$Lambda.0x0000000800c0b000.run` → `Foo$$Lambda.run`,
/// `GeneratedMethodAccessor17.invoke` → `GeneratedMethodAccessor.invoke`.
fn without_serial_numbers(name: &str) -> Option<String> {
    let mut changed = false;
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find("$$Lambda") {
        let after = at + "$$Lambda".len();
        out.push_str(&rest[..after]);
        let tail = &rest[after..];
        // `$123` (JDK 8–17), then `/0x…` (hidden class address), or `.0x…` (JDK 21).
        let mut skip = 0;
        let bytes = tail.as_bytes();
        if bytes.first() == Some(&b'$') {
            let n = tail[1..].bytes().take_while(u8::is_ascii_digit).count();
            if n > 0 {
                skip = 1 + n;
            }
        }
        let t = &tail[skip..];
        if let Some(hex) = t.strip_prefix("/0x").or_else(|| t.strip_prefix(".0x")) {
            let n = hex.bytes().take_while(u8::is_ascii_hexdigit).count();
            if n > 0 {
                skip += 3 + n;
            }
        }
        changed |= skip > 0;
        rest = &tail[skip..];
    }
    out.push_str(rest);
    for generated in [
        "GeneratedMethodAccessor",
        "GeneratedConstructorAccessor",
        "GeneratedSerializationConstructorAccessor",
    ] {
        if let Some(at) = out.find(generated) {
            let digits_at = at + generated.len();
            let n = out[digits_at..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            if n > 0 {
                out.replace_range(digits_at..digits_at + n, "");
                changed = true;
            }
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str) -> String {
        Normalisation::Functions.frame(name).into_owned()
    }

    #[test]
    fn py_spy_frames_lose_lines_and_directories() {
        assert_eq!(f("quote (/srv/app/v1/shop.py:82)"), "quote (shop.py)");
        assert_eq!(f("quote (/srv/app/v2/shop.py:93)"), "quote (shop.py)");
        assert_eq!(
            f("BaseHTTPRequestHandler.handle_one_request (http/server.py:404)"),
            "BaseHTTPRequestHandler.handle_one_request (server.py)"
        );
        assert_eq!(f("quote (shop.py)"), "quote (shop.py)");
        assert_eq!(f("<module> (shop.py:110)"), "<module> (shop.py)");
        // A package's __init__ keeps its folder.
        assert_eq!(
            f("JSONEncoder.encode (/usr/lib/python3.11/json/__init__.py:231)"),
            "JSONEncoder.encode (json/__init__.py)"
        );
        assert_eq!(
            f("dumps (json/__init__.py:231)"),
            "dumps (json/__init__.py)"
        );
        // Windows paths too.
        assert_eq!(f(r"run (C:\srv\app\shop.py:3)"), "run (shop.py)");
    }

    #[test]
    fn line_numbers_go_but_cpp_paths_stay() {
        assert_eq!(f("com/acme/Quote.price:42"), "com/acme/Quote.price");
        assert_eq!(f("handler app.js:10:5"), "handler app.js");
        assert_eq!(
            f("std::vector<int>::push_back"),
            "std::vector<int>::push_back"
        );
        assert_eq!(f("core::fmt::write"), "core::fmt::write");
        assert_eq!(
            f("G1ParScanThreadState::trim_queue_to_threshold_[j]"),
            "G1ParScanThreadState::trim_queue_to_threshold"
        );
        assert_eq!(f("[unknown]"), "[unknown]");
        assert_eq!(f("/usr/lib/x86_64-linux-gnu/libc.so.6"), "libc.so.6");
        assert_eq!(
            f("sun/nio/ch/EPollArrayWrapper:.epollWait"),
            "sun/nio/ch/EPollArrayWrapper:.epollWait"
        );
    }

    #[test]
    fn thread_and_process_ids_are_dropped() {
        assert_eq!(f("[pool-1-thread-3 tid=12345]"), "[pool-1-thread-3]");
        assert_eq!(f("thread (0x7f3a1c2d3700): worker"), "thread: worker");
        assert_eq!(
            f("process 4242:\"python app.py\""),
            "process:\"python app.py\""
        );
        assert_eq!(f("[tid=x]"), "[tid=x]");
    }

    #[test]
    fn generated_jvm_names_lose_serial_numbers() {
        assert_eq!(
            f("com/acme/Orders$$Lambda$123/0x0000000800c0b000.apply"),
            "com/acme/Orders$$Lambda.apply"
        );
        assert_eq!(
            f("com/acme/Orders$$Lambda.0x00007f3ac0a1c8d0.apply"),
            "com/acme/Orders$$Lambda.apply"
        );
        assert_eq!(
            f("jdk/internal/reflect/GeneratedMethodAccessor17.invoke"),
            "jdk/internal/reflect/GeneratedMethodAccessor.invoke"
        );
    }

    #[test]
    fn keep_lines_keeps_names_but_not_annotations() {
        let n = Normalisation::Lines;
        assert_eq!(
            n.frame("quote (/srv/app/v1/shop.py:82)"),
            "quote (/srv/app/v1/shop.py:82)"
        );
        assert_eq!(n.frame("vfs_read_[k]"), "vfs_read");
        assert_eq!(
            Normalisation::Functions.stack("a (/x/m.py:1);b (/x/m.py:2)_[j]"),
            "a (m.py);b (m.py)"
        );
    }
}
