//! The one way perfdash makes keys of cached things: the digest of a
//! value's serde form ([`serde_digest`]), salted with what names the
//! perfdash that made it ([`salt`]). Page memo keys (`render::memo`), the
//! digests of profiles ([`Digested`]) and of rounds all go through it; the
//! cache keeps nothing under a key made any other way.

/// What names this perfdash: its version and its binary's `stat` (a
/// rebuilt binary, with other templates or code, has another). Every key
/// the cache keeps across builds is salted with it (page memo keys,
/// change-point judgements), so that a change to any code never reuses
/// what older code made. Worked out once per process: the running code is
/// the binary as it was when first asked. `None` when the binary cannot be
/// named: nothing is then kept under a key.
pub fn salt() -> Option<u128> {
    static SALT: std::sync::OnceLock<Option<u128>> = std::sync::OnceLock::new();
    *SALT.get_or_init(|| {
        let exe = std::env::current_exe().ok()?;
        let stamp = crate::stat_stamp::of(&std::fs::metadata(exe).ok()?)?;
        Some(serde_digest(&(
            "perfdash binary",
            env!("CARGO_PKG_VERSION"),
            stamp.numbers,
        )))
    })
}

/// The key of a thing of kind `kind` made from `inputs` by the perfdash
/// `salt` names: the digest of all three.
pub fn key(salt: u128, kind: &str, inputs: &impl serde::Serialize) -> u128 {
    serde_digest(&(salt, kind, inputs))
}

/// A shared value (`Arc`) whose `Debug` form is the digest of everything
/// it serialises ([`serde_digest`]), computed once for it and all its
/// clones however often it is printed. For the page memo's keys
/// (`render::memo`): a profile's stacks enter the keys of its flame page,
/// of the next run's (as its baseline) and of each comparison that shows
/// it, and printing them whole each time was most of those keys' cost
/// (and formatting them once per build, a twentieth of a build after one
/// new run at 120 endpoints × 3 years). The digest stands for the whole
/// value, as a key does: `T` must serialise every field.
pub struct Digested<T> {
    value: std::sync::Arc<T>,
    digest: std::sync::Arc<std::sync::OnceLock<u128>>,
}

impl<T> Digested<T> {
    pub fn new(value: std::sync::Arc<T>) -> Digested<T> {
        Digested {
            value,
            digest: Default::default(),
        }
    }
}

impl<T> Clone for Digested<T> {
    fn clone(&self) -> Self {
        Digested {
            value: self.value.clone(),
            digest: self.digest.clone(),
        }
    }
}

impl<T> std::ops::Deref for Digested<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: serde::Serialize> Digested<T> {
    /// The digest of everything the value serialises, computed once.
    pub fn digest(&self) -> u128 {
        *self.digest.get_or_init(|| serde_digest(&*self.value))
    }
}

impl<T: serde::Serialize> std::fmt::Debug for Digested<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Digested({:032x})", self.digest())
    }
}

/// A 128-bit digest of a `Serialize` value: every number and string it
/// serialises, floats as their bits, each with a tag of its kind,
/// sequences, maps and structs with an end mark, enum variants by their
/// index, so that two different values of one type give different bytes
/// to hash. Nothing is formatted: for a page memo key (`render::memo`) it
/// is about ten times cheaper than hashing the value's `Debug` form.
///
/// Struct fields go by position, without their names: a type's fields
/// come in one order, and a field left out by `skip_serializing_if` is
/// marked (`serde_derive` calls `skip_field`), so a value's parts cannot
/// shift into another field's place. The names would tell types apart,
/// which a key never needs (one key holds one type; the memo salt names
/// the binary): writing them was most of the bytes, and of the cost, of
/// the year pages' keys. Fields a type always skips (`#[serde(skip)]`)
/// are not in the digest.
pub fn serde_digest(value: &impl serde::Serialize) -> u128 {
    // The bytes are gathered, then hashed at once: the streaming hasher's
    // cost per call dwarfed the few bytes of each field.
    let mut digest = SerdeDigest(Vec::with_capacity(4096));
    // Hashing never fails; a custom `Serialize` that errs gives the digest
    // of what came before, tagged.
    if value.serialize(&mut digest).is_err() {
        digest.tag(0xff);
    }
    xxhash_rust::xxh3::xxh3_128(&digest.0)
}

struct SerdeDigest(Vec<u8>);

impl SerdeDigest {
    fn tag(&mut self, tag: u8) {
        self.0.push(tag);
    }
    fn bytes(&mut self, tag: u8, bytes: &[u8]) {
        self.number(tag, bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }
    /// A tag and 8 bytes: every number but a 128-bit one.
    fn number(&mut self, tag: u8, bits: u64) {
        let mut buf = [0u8; 9];
        buf[0] = tag;
        buf[1..].copy_from_slice(&bits.to_le_bytes());
        self.0.extend_from_slice(&buf);
    }
    fn wide(&mut self, tag: u8, bits: u128) {
        self.tag(tag);
        self.0.extend_from_slice(&bits.to_le_bytes());
    }
}

#[derive(Debug)]
struct SerdeDigestError;

impl std::fmt::Display for SerdeDigestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a value could not be serialised")
    }
}

impl std::error::Error for SerdeDigestError {}

impl serde::ser::Error for SerdeDigestError {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        SerdeDigestError
    }
}

type DigestResult = Result<(), SerdeDigestError>;

impl serde::Serializer for &mut SerdeDigest {
    type Ok = ();
    type Error = SerdeDigestError;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn serialize_bool(self, v: bool) -> DigestResult {
        self.number(1, u64::from(v));
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> DigestResult {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> DigestResult {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> DigestResult {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> DigestResult {
        self.number(2, v as u64);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> DigestResult {
        self.wide(26, v as u128);
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> DigestResult {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> DigestResult {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> DigestResult {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> DigestResult {
        self.number(3, v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> DigestResult {
        self.wide(27, v);
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> DigestResult {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> DigestResult {
        self.number(4, v.to_bits());
        Ok(())
    }
    fn serialize_char(self, v: char) -> DigestResult {
        self.number(5, u64::from(u32::from(v)));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> DigestResult {
        self.bytes(6, v.as_bytes());
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> DigestResult {
        self.bytes(7, v);
        Ok(())
    }
    fn serialize_none(self) -> DigestResult {
        self.tag(8);
        Ok(())
    }
    fn serialize_some<T: serde::Serialize + ?Sized>(self, value: &T) -> DigestResult {
        self.tag(9);
        value.serialize(self)
    }
    fn serialize_unit(self) -> DigestResult {
        self.tag(10);
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> DigestResult {
        self.tag(11);
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, index: u32, _: &'static str) -> DigestResult {
        self.number(12, u64::from(index));
        Ok(())
    }
    fn serialize_newtype_struct<T: serde::Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> DigestResult {
        self.tag(13);
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: serde::Serialize + ?Sized>(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        value: &T,
    ) -> DigestResult {
        self.number(14, u64::from(index));
        value.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, SerdeDigestError> {
        self.tag(15);
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, SerdeDigestError> {
        self.tag(16);
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, SerdeDigestError> {
        self.tag(17);
        Ok(self)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, SerdeDigestError> {
        self.number(18, u64::from(index));
        Ok(self)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, SerdeDigestError> {
        self.tag(19);
        Ok(self)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, SerdeDigestError> {
        self.tag(20);
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        index: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, SerdeDigestError> {
        self.number(21, u64::from(index));
        Ok(self)
    }
}

/// The end of a sequence, tuple, map or struct.
const END: u8 = 0xfe;

/// The four compound kinds whose parts are plain elements.
macro_rules! elements {
    ($($kind:ident :: $method:ident),*) => {$(
        impl serde::ser::$kind for &mut SerdeDigest {
            type Ok = ();
            type Error = SerdeDigestError;
            fn $method<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> DigestResult {
                self.tag(22);
                value.serialize(&mut **self)
            }
            fn end(self) -> DigestResult {
                self.tag(END);
                Ok(())
            }
        }
    )*};
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl serde::ser::SerializeMap for &mut SerdeDigest {
    type Ok = ();
    type Error = SerdeDigestError;
    fn serialize_key<T: serde::Serialize + ?Sized>(&mut self, key: &T) -> DigestResult {
        self.tag(23);
        key.serialize(&mut **self)
    }
    fn serialize_value<T: serde::Serialize + ?Sized>(&mut self, value: &T) -> DigestResult {
        self.tag(24);
        value.serialize(&mut **self)
    }
    fn end(self) -> DigestResult {
        self.tag(END);
        Ok(())
    }
}

/// The two struct kinds: fields by position, a skipped one marked.
macro_rules! fields {
    ($($kind:ident),*) => {$(
        impl serde::ser::$kind for &mut SerdeDigest {
            type Ok = ();
            type Error = SerdeDigestError;
            fn serialize_field<T: serde::Serialize + ?Sized>(
                &mut self,
                _: &'static str,
                value: &T,
            ) -> DigestResult {
                self.tag(25);
                value.serialize(&mut **self)
            }
            fn skip_field(&mut self, _: &'static str) -> DigestResult {
                self.tag(28);
                Ok(())
            }
            fn end(self) -> DigestResult {
                self.tag(END);
                Ok(())
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_serde_digest_tells_every_difference_apart() {
        #[derive(serde::Serialize, Clone)]
        struct Point {
            name: String,
            label: Option<String>,
            values: Vec<f64>,
            count: u64,
            flag: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            extra: Option<f64>,
            kind: Kind,
        }
        #[derive(serde::Serialize, Clone)]
        enum Kind {
            A,
            B(u32),
        }
        let p = Point {
            name: "orders".into(),
            label: None,
            values: vec![1.0, 2.0],
            count: 3,
            flag: false,
            extra: None,
            kind: Kind::A,
        };
        let d = serde_digest(&p);
        assert_eq!(d, serde_digest(&p.clone()), "deterministic");
        let changes: Vec<Point> = vec![
            Point {
                name: "order".into(),
                ..p.clone()
            },
            Point {
                label: Some(String::new()),
                ..p.clone()
            },
            Point {
                values: vec![1.0, 2.000000000000001],
                ..p.clone()
            },
            Point {
                values: vec![1.0, 2.0, 0.0],
                ..p.clone()
            },
            Point {
                values: vec![-0.0 + 1.0, -0.0],
                ..p.clone()
            },
            Point {
                count: 4,
                ..p.clone()
            },
            Point {
                flag: true,
                ..p.clone()
            },
            Point {
                extra: Some(0.0),
                ..p.clone()
            },
            Point {
                kind: Kind::B(0),
                ..p.clone()
            },
        ];
        for (i, q) in changes.iter().enumerate() {
            assert_ne!(serde_digest(q), d, "change {i}");
        }
        // Without field names: a value that moves to another skippable
        // field still differs.
        #[derive(serde::Serialize)]
        struct Two {
            #[serde(skip_serializing_if = "Option::is_none")]
            a: Option<u32>,
            #[serde(skip_serializing_if = "Option::is_none")]
            b: Option<u32>,
        }
        assert_ne!(
            serde_digest(&Two {
                a: Some(1),
                b: None
            }),
            serde_digest(&Two {
                a: None,
                b: Some(1)
            })
        );
        // Strings that concatenate the same way still differ.
        assert_ne!(serde_digest(&("ab", "c")), serde_digest(&("a", "bc")));
        assert_ne!(
            serde_digest(&vec![vec![1u8], vec![]]),
            serde_digest(&vec![vec![], vec![1u8]])
        );
    }

    #[test]
    fn a_digested_value_prints_the_digest_of_the_whole_value() {
        let long = |last: char| {
            let mut v = vec!['x'; 40_000];
            v.push(last);
            std::sync::Arc::new(v)
        };
        let a = Digested::new(long('a'));
        let shown = format!("{a:?}");
        assert_eq!(shown, format!("{:?}", a.clone()), "clones share it");
        assert_eq!(
            shown,
            format!("{:?}", Digested::new(long('a'))),
            "same value"
        );
        assert_ne!(
            shown,
            format!("{:?}", Digested::new(long('b'))),
            "its last element"
        );
        assert_eq!(a.len(), 40_001, "it reads as the value");
    }
}
