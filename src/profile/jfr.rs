//! JDK Flight Recorder recordings (`java -XX:StartFlightRecording=…`,
//! `jcmd <pid> JFR.dump`): the `jdk.ExecutionSample` events as a CPU
//! profile, one sample per event.
//!
//! Read as the JDK writes the format (`jdk.jfr.internal` ChunkHeader,
//! MetadataDescriptor, ChunkParser; checked against `jfr print --json` of
//! JDK 17 recordings): a file is one or more chunks, each
//!
//! * a 68-byte header: `FLR\0`, version (major 2), the chunk's size, the
//!   offsets of its last constant-pool checkpoint and of its metadata,
//!   times, and feature flags (bit 0: integers are LEB128-compressed);
//! * events, each `size, type id, fields…`: type 0 is the metadata (a
//!   string table and an element tree describing every type and its
//!   fields), type 1 a checkpoint (constant pools: stack traces, methods,
//!   classes, symbols, …), the others what was recorded.
//!
//! Events and constants are read field by field from the metadata, so any
//! JDK's layout reads; only the types a stack needs are kept. A frame is
//! `class.method` with the class in the JVM's internal form
//! (`java/util/HashMap.get`), as async-profiler writes Java frames. No
//! other JDK-written Rust reader was sound on hostile input (jfrs 0.2.5
//! allocates a chunk of whatever size the header claims), so every length,
//! offset and index here is checked against the bytes there are.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::{Profile, ProfileFormat};
use crate::error::Error;

/// The magic number at the start of every chunk.
pub(crate) const MAGIC: &[u8; 4] = b"FLR\0";

const HEADER: usize = 68;

/// Reads the execution samples of a recording.
pub(crate) fn parse(bytes: &[u8], path: &Path, kind: &str) -> Result<Profile, Error> {
    let err = |at: usize, m: String| Error::at(path, None, format!("JFR byte {at}: {m}"));
    let mut profile = Profile::empty(kind, ProfileFormat::Jfr);
    let mut start = 0usize;
    let mut samples = 0u64;
    let mut other_events: BTreeMap<String, u64> = BTreeMap::new();
    while start < bytes.len() {
        let chunk = &bytes[start..];
        if chunk.len() < HEADER || &chunk[..4] != MAGIC {
            return Err(err(start, "not the start of a JFR chunk (FLR\\0)".into()));
        }
        let major = u16::from_be_bytes([chunk[4], chunk[5]]);
        if major != 2 {
            return Err(err(
                start + 4,
                format!("JFR format version {major}: perfdash reads version 2 (JDK 11 and later)"),
            ));
        }
        let be64 = |at: usize| i64::from_be_bytes(chunk[at..at + 8].try_into().expect("8 bytes"));
        let size = be64(8);
        let metadata_at = be64(24);
        if size == 0 || metadata_at == 0 {
            return Err(err(
                start,
                "the recording was never finished (the JVM stopped before it wrote the chunk out?); \
                 dump it with `jcmd <pid> JFR.dump filename=…` or let the recording end"
                    .into(),
            ));
        }
        let size = usize::try_from(size)
            .ok()
            .filter(|s| *s >= HEADER)
            .ok_or_else(|| err(start + 8, format!("chunk size {size}")))?;
        if size > chunk.len() {
            return Err(err(
                start,
                format!(
                    "the chunk is {size} bytes but the file has {} left: cut short (copied while \
                     still being written?)",
                    chunk.len()
                ),
            ));
        }
        let compressed = chunk[67] & 1 == 1;
        let chunk = &chunk[..size];
        let metadata_at = usize::try_from(metadata_at)
            .ok()
            .filter(|m| (HEADER..size).contains(m))
            .ok_or_else(|| err(start + 24, format!("metadata offset {metadata_at}")))?;
        let types = Metadata::read(chunk, metadata_at, compressed)
            .map_err(|(at, m)| err(start + at, format!("metadata: {m}")))?;
        let read = Chunk::read(chunk, &types, compressed).map_err(|(at, m)| err(start + at, m))?;
        for (trace, n) in &read.sample_traces {
            let stack = read.stack(*trace);
            profile.add(&stack, *n as f64);
            samples += n;
        }
        for (ty, n) in read.other_events {
            if let Some(name) = types.classes.get(&ty).map(|c| c.name.clone()) {
                *other_events.entry(name).or_default() += n;
            }
        }
        start += size;
    }
    if samples == 0 {
        let mut seen: Vec<(u64, String)> = other_events.into_iter().map(|(k, v)| (v, k)).collect();
        seen.sort_by(|a, b| b.cmp(a));
        let seen: Vec<String> = seen
            .iter()
            .take(5)
            .map(|(n, k)| format!("{k} ×{n}"))
            .collect();
        return Err(Error::at(
            path,
            None,
            format!(
                "a JFR recording without execution samples (jdk.ExecutionSample){}: record with \
                 settings=profile, or enable jdk.ExecutionSample in your .jfc",
                if seen.is_empty() {
                    String::new()
                } else {
                    format!("; it holds {}", seen.join(", "))
                }
            ),
        ));
    }
    profile.samples = Some(samples);
    Ok(profile)
}

type Fail = (usize, String);

/// A cursor over one chunk; every read is checked.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    compressed: bool,
}

impl<'a> Cursor<'a> {
    fn fail<T>(&self, m: impl Into<String>) -> Result<T, Fail> {
        Err((self.pos, m.into()))
    }
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], Fail> {
        match self.pos.checked_add(n).filter(|e| *e <= self.buf.len()) {
            Some(end) => {
                let b = &self.buf[self.pos..end];
                self.pos = end;
                Ok(b)
            }
            None => self.fail(format!("{n} bytes wanted past the end of the chunk")),
        }
    }
    fn u8(&mut self) -> Result<u8, Fail> {
        Ok(self.bytes(1)?[0])
    }
    /// JFR's compressed integer: 7 bits per byte, low first, for up to 8
    /// bytes, then a 9th byte of 8 bits.
    fn varint(&mut self) -> Result<u64, Fail> {
        let mut v = 0u64;
        for i in 0..8 {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Ok(v | u64::from(self.u8()?) << 56)
    }
    fn long(&mut self) -> Result<i64, Fail> {
        if self.compressed {
            Ok(self.varint()? as i64)
        } else {
            Ok(i64::from_be_bytes(self.bytes(8)?.try_into().expect("8")))
        }
    }
    fn int(&mut self) -> Result<i64, Fail> {
        if self.compressed {
            Ok(self.varint()? as i64)
        } else {
            Ok(i64::from(i32::from_be_bytes(
                self.bytes(4)?.try_into().expect("4"),
            )))
        }
    }
    fn short(&mut self) -> Result<i64, Fail> {
        if self.compressed {
            Ok(self.varint()? as i64)
        } else {
            Ok(i64::from(i16::from_be_bytes(
                self.bytes(2)?.try_into().expect("2"),
            )))
        }
    }
    /// A count of following items, which must fit in the bytes left (each
    /// item takes at least one byte): a forged count cannot allocate.
    fn count(&mut self) -> Result<usize, Fail> {
        let n = self.int()?;
        match usize::try_from(n) {
            Ok(n) if n <= self.buf.len() - self.pos => Ok(n),
            _ => self.fail(format!(
                "a count of {n} where {} bytes are left",
                self.buf.len() - self.pos
            )),
        }
    }
    /// A string in JFR's encoding; `Err` for a reference to the string
    /// pool (resolved by the caller when needed).
    fn string(&mut self) -> Result<Text, Fail> {
        match self.u8()? {
            0 => Ok(Text::Null),
            1 => Ok(Text::Plain(String::new())),
            2 => Ok(Text::Pool(self.long()?)),
            3 => {
                let n = self.count()?;
                Ok(Text::Plain(
                    String::from_utf8_lossy(self.bytes(n)?).into_owned(),
                ))
            }
            4 => {
                let n = self.count()?;
                let mut s = String::with_capacity(n);
                for _ in 0..n {
                    let c = self.int()?;
                    s.push(
                        u32::try_from(c)
                            .ok()
                            .and_then(char::from_u32)
                            .unwrap_or('\u{fffd}'),
                    );
                }
                Ok(Text::Plain(s))
            }
            5 => {
                let n = self.count()?;
                Ok(Text::Plain(
                    self.bytes(n)?.iter().map(|&b| b as char).collect(),
                ))
            }
            t => self.fail(format!("unknown string encoding {t}")),
        }
    }
}

#[derive(Debug, Clone)]
enum Text {
    Null,
    Plain(String),
    Pool(i64),
}

/// A field of a type, from the metadata.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    type_id: i64,
    pooled: bool,
    array: bool,
}

#[derive(Debug, Clone)]
struct Class {
    name: String,
    fields: Vec<Field>,
}

/// The chunk's types by id.
struct Metadata {
    classes: HashMap<i64, Class>,
}

impl Metadata {
    fn read(chunk: &[u8], at: usize, compressed: bool) -> Result<Metadata, Fail> {
        let mut c = Cursor {
            buf: chunk,
            pos: at,
            compressed,
        };
        let _size = c.int()?;
        if c.long()? != 0 {
            return c.fail("the metadata offset does not point at the metadata event");
        }
        let _start = c.long()?;
        let _duration = c.long()?;
        let _id = c.long()?;
        let n = c.count()?;
        let mut strings = Vec::with_capacity(n);
        for _ in 0..n {
            strings.push(match c.string()? {
                Text::Plain(s) => s,
                _ => String::new(),
            });
        }
        let root = Element::read(&mut c, &strings, 0)?;
        let mut classes = HashMap::new();
        for metadata in root.children.iter().filter(|e| e.name == "metadata") {
            for class in metadata.children.iter().filter(|e| e.name == "class") {
                let id: i64 = class.attr("id").and_then(|v| v.parse().ok()).unwrap_or(-1);
                let fields = class
                    .children
                    .iter()
                    .filter(|e| e.name == "field")
                    .map(|f| Field {
                        name: f.attr("name").unwrap_or_default().to_string(),
                        type_id: f.attr("class").and_then(|v| v.parse().ok()).unwrap_or(-1),
                        pooled: f.attr("constantPool") == Some("true"),
                        array: f.attr("dimension").is_some_and(|d| d != "0"),
                    })
                    .collect();
                classes.insert(
                    id,
                    Class {
                        name: class.attr("name").unwrap_or_default().to_string(),
                        fields,
                    },
                );
            }
        }
        Ok(Metadata { classes })
    }

    fn id_of(&self, name: &str) -> Option<i64> {
        self.classes
            .iter()
            .find(|(_, c)| c.name == name)
            .map(|(id, _)| *id)
    }
}

/// An element of the metadata tree.
struct Element {
    name: String,
    attributes: Vec<(String, String)>,
    children: Vec<Element>,
}

impl Element {
    fn read(c: &mut Cursor<'_>, strings: &[String], depth: usize) -> Result<Element, Fail> {
        if depth > 32 {
            return c.fail("metadata nested deeper than 32 levels");
        }
        let s = |c: &Cursor<'_>, i: i64| -> Result<String, Fail> {
            usize::try_from(i)
                .ok()
                .and_then(|i| strings.get(i))
                .cloned()
                .map_or_else(
                    || c.fail(format!("string {i} of the metadata does not exist")),
                    Ok,
                )
        };
        let name_index = c.int()?;
        let name = s(c, name_index)?;
        let n = c.count()?;
        let mut attributes = Vec::with_capacity(n);
        for _ in 0..n {
            let k = c.int()?;
            let v = c.int()?;
            attributes.push((s(c, k)?, s(c, v)?));
        }
        let n = c.count()?;
        let mut children = Vec::with_capacity(n);
        for _ in 0..n {
            children.push(Element::read(c, strings, depth + 1)?);
        }
        Ok(Element {
            name,
            attributes,
            children,
        })
    }

    fn attr(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A value read by the metadata, for the few types a stack needs.
#[derive(Debug, Clone)]
enum Value {
    Number,
    Text(Text),
    Ref(i64),
    Object(Vec<Value>),
    Array(Vec<Value>),
    Skipped,
}

/// The types a stack is made of, by id.
struct Wanted {
    string: Option<i64>,
    symbol: Option<i64>,
    class: Option<i64>,
    method: Option<i64>,
    stack_trace: Option<i64>,
    sample: Option<i64>,
}

/// What one chunk gave.
struct Chunk {
    /// Stack trace id → samples.
    sample_traces: BTreeMap<i64, u64>,
    other_events: BTreeMap<i64, u64>,
    strings: HashMap<i64, String>,
    symbols: HashMap<i64, Text>,
    /// Class id → its name (a symbol id).
    classes: HashMap<i64, i64>,
    /// Method id → (class id, name symbol id).
    methods: HashMap<i64, (i64, i64)>,
    /// Stack trace id → method ids, leaf first.
    traces: HashMap<i64, Vec<i64>>,
}

impl Chunk {
    fn read(chunk: &[u8], types: &Metadata, compressed: bool) -> Result<Chunk, Fail> {
        let wanted = Wanted {
            string: types.id_of("java.lang.String"),
            symbol: types.id_of("jdk.types.Symbol"),
            class: types.id_of("java.lang.Class"),
            method: types.id_of("jdk.types.Method"),
            stack_trace: types.id_of("jdk.types.StackTrace"),
            sample: types.id_of("jdk.ExecutionSample"),
        };
        let mut out = Chunk {
            sample_traces: BTreeMap::new(),
            other_events: BTreeMap::new(),
            strings: HashMap::new(),
            symbols: HashMap::new(),
            classes: HashMap::new(),
            methods: HashMap::new(),
            traces: HashMap::new(),
        };
        let trace_field = wanted.sample.and_then(|id| {
            types.classes[&id]
                .fields
                .iter()
                .position(|f| f.name == "stackTrace")
        });
        let mut c = Cursor {
            buf: chunk,
            pos: HEADER,
            compressed,
        };
        while c.pos < chunk.len() {
            let start = c.pos;
            let size = c.int()?;
            let end = usize::try_from(size)
                .ok()
                .filter(|s| *s > 0)
                .and_then(|s| start.checked_add(s))
                .filter(|e| *e <= chunk.len());
            let Some(end) = end else {
                return c.fail(format!(
                    "an event of {size} bytes does not fit in the chunk"
                ));
            };
            let ty = c.long()?;
            let mut event = Cursor {
                buf: &chunk[..end],
                pos: c.pos,
                compressed,
            };
            match ty {
                0 => {}
                1 => out.checkpoint(&mut event, types, &wanted)?,
                t if Some(t) == wanted.sample => {
                    if let Some(field) = trace_field {
                        let fields = &types.classes[&t].fields;
                        let mut trace = None;
                        for (i, f) in fields.iter().enumerate().take(field + 1) {
                            let v = read_value(&mut event, types, f, 0, false)?;
                            if i == field {
                                trace = match v {
                                    Value::Ref(r) => Some(r),
                                    _ => None,
                                };
                            }
                        }
                        if let Some(r) = trace {
                            *out.sample_traces.entry(r).or_default() += 1;
                        }
                    }
                }
                t => *out.other_events.entry(t).or_default() += 1,
            }
            c.pos = end;
        }
        Ok(out)
    }

    fn checkpoint(&mut self, c: &mut Cursor<'_>, types: &Metadata, w: &Wanted) -> Result<(), Fail> {
        let _start = c.long()?;
        let _duration = c.long()?;
        let _delta = c.long()?;
        let _kind = c.u8()?;
        let pools = c.count()?;
        for _ in 0..pools {
            let ty = c.long()?;
            let Some(class) = types.classes.get(&ty) else {
                return c.fail(format!(
                    "a constant pool of type {ty}, which the metadata does not describe"
                ));
            };
            let n = c.count()?;
            let keep = [w.string, w.symbol, w.class, w.method, w.stack_trace].contains(&Some(ty));
            let as_field = Field {
                name: String::new(),
                type_id: ty,
                pooled: false,
                array: false,
            };
            for _ in 0..n {
                let index = c.long()?;
                let value = read_value(c, types, &as_field, 0, !keep)?;
                if !keep {
                    continue;
                }
                let field = |name: &str| class.fields.iter().position(|f| f.name == name);
                let get = |v: &Value, name: &str| -> Option<Value> {
                    match v {
                        Value::Object(fields) => field(name).and_then(|i| fields.get(i)).cloned(),
                        _ => None,
                    }
                };
                let reference = |v: Option<Value>| match v {
                    Some(Value::Ref(r)) => Some(r),
                    _ => None,
                };
                if Some(ty) == w.string {
                    if let Value::Text(Text::Plain(s)) = value {
                        self.strings.insert(index, s);
                    }
                } else if Some(ty) == w.symbol {
                    if let Some(Value::Text(t)) = get(&value, "string") {
                        self.symbols.insert(index, t);
                    }
                } else if Some(ty) == w.class {
                    if let Some(name) = reference(get(&value, "name")) {
                        self.classes.insert(index, name);
                    }
                } else if Some(ty) == w.method {
                    let class = reference(get(&value, "type")).unwrap_or(-1);
                    let name = reference(get(&value, "name")).unwrap_or(-1);
                    self.methods.insert(index, (class, name));
                } else if Some(ty) == w.stack_trace {
                    let mut methods = Vec::new();
                    if let Some(Value::Array(frames)) = get(&value, "frames") {
                        let frame_type = class
                            .fields
                            .iter()
                            .find(|f| f.name == "frames")
                            .and_then(|f| types.classes.get(&f.type_id));
                        let method_at = frame_type
                            .and_then(|t| t.fields.iter().position(|f| f.name == "method"));
                        for frame in frames {
                            if let (Value::Object(fields), Some(i)) = (&frame, method_at)
                                && let Some(Value::Ref(m)) = fields.get(i)
                            {
                                methods.push(*m);
                            }
                        }
                    }
                    self.traces.insert(index, methods);
                }
            }
        }
        Ok(())
    }

    fn text(&self, t: &Text) -> String {
        match t {
            Text::Null => String::new(),
            Text::Plain(s) => s.clone(),
            Text::Pool(i) => self.strings.get(i).cloned().unwrap_or_default(),
        }
    }

    fn symbol(&self, id: i64) -> String {
        self.symbols
            .get(&id)
            .map(|t| self.text(t))
            .unwrap_or_default()
    }

    /// The folded stack of a trace, root first.
    fn stack(&self, trace: i64) -> String {
        let Some(methods) = self.traces.get(&trace) else {
            return "[unknown stack]".to_string();
        };
        let mut frames: Vec<String> = methods
            .iter()
            .rev()
            .map(|m| match self.methods.get(m) {
                Some((class, name)) => {
                    let class = self
                        .classes
                        .get(class)
                        .map(|s| self.symbol(*s))
                        .unwrap_or_default();
                    let name = self.symbol(*name);
                    let frame = if class.is_empty() {
                        name
                    } else {
                        format!("{class}.{name}")
                    };
                    frame.replace(';', ":")
                }
                None => "[unknown method]".to_string(),
            })
            .collect();
        frames.retain(|f| !f.is_empty());
        frames.join(";")
    }
}

/// The primitive types of JFR's metadata.
fn primitive(name: &str) -> Option<u8> {
    Some(match name {
        "boolean" | "byte" => 1,
        "char" | "short" | "int" | "long" => 2,
        "float" => 4,
        "double" => 8,
        "java.lang.String" => 0,
        _ => return None,
    })
}

/// Reads (or, with `skip`, only passes over) one value of `field`'s type.
fn read_value(
    c: &mut Cursor<'_>,
    types: &Metadata,
    field: &Field,
    depth: usize,
    skip: bool,
) -> Result<Value, Fail> {
    if depth > 16 {
        return c.fail("values nested deeper than 16 levels");
    }
    if field.array {
        let n = c.count()?;
        let one = Field {
            array: false,
            ..field.clone()
        };
        let mut items = Vec::new();
        for _ in 0..n {
            let v = read_value(c, types, &one, depth + 1, skip)?;
            if !skip {
                items.push(v);
            }
        }
        return Ok(if skip {
            Value::Skipped
        } else {
            Value::Array(items)
        });
    }
    if field.pooled {
        return Ok(Value::Ref(c.long()?));
    }
    let Some(class) = types.classes.get(&field.type_id) else {
        return c.fail(format!(
            "a field of type {}, which the metadata does not describe",
            field.type_id
        ));
    };
    match (primitive(&class.name), class.name.as_str()) {
        (Some(0), _) => Ok(Value::Text(c.string()?)),
        (Some(_), "boolean" | "byte") => {
            c.u8()?;
            Ok(Value::Number)
        }
        (Some(_), "short" | "char") => {
            c.short()?;
            Ok(Value::Number)
        }
        (Some(_), "int") => {
            c.int()?;
            Ok(Value::Number)
        }
        (Some(_), "long") => {
            c.long()?;
            Ok(Value::Number)
        }
        (Some(n), _) => {
            c.bytes(n as usize)?;
            Ok(Value::Skipped)
        }
        (None, _) => {
            let mut fields = Vec::with_capacity(if skip { 0 } else { class.fields.len() });
            for f in &class.fields {
                let v = read_value(c, types, f, depth + 1, skip)?;
                if !skip {
                    fields.push(v);
                }
            }
            Ok(if skip {
                Value::Skipped
            } else {
                Value::Object(fields)
            })
        }
    }
}
