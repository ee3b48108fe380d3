//! Values of every CQL type, made from one drawn number: the same number always gives the same
//! value (a read that draws a write's number names the row that write wrote), and a value's bytes
//! are written straight into the request, with no allocation.

use crate::dist::{mix, Distribution};

/// A CQL type, as the server describes a bind marker when the statement is prepared.
#[derive(Debug, Clone, PartialEq)]
pub enum CqlType {
    Ascii,
    Text,
    Blob,
    Boolean,
    TinyInt,
    SmallInt,
    Int,
    BigInt,
    Counter,
    Varint,
    Float,
    Double,
    Decimal,
    Timestamp,
    Date,
    Time,
    Uuid,
    Timeuuid,
    Inet,
    Duration,
    List(Box<CqlType>),
    Set(Box<CqlType>),
    Map(Box<CqlType>, Box<CqlType>),
    Tuple(Vec<CqlType>),
    Udt(Vec<(String, CqlType)>),
    Vector(Box<CqlType>, u16),
}

impl CqlType {
    /// Bytes of a value of this type when every value has the same size (what a vector's elements
    /// need to be written without lengths).
    pub fn fixed_size(&self) -> Option<usize> {
        Some(match self {
            CqlType::Boolean | CqlType::TinyInt => 1,
            CqlType::SmallInt => 2,
            CqlType::Int | CqlType::Float | CqlType::Date => 4,
            CqlType::BigInt
            | CqlType::Counter
            | CqlType::Double
            | CqlType::Timestamp
            | CqlType::Time => 8,
            CqlType::Uuid | CqlType::Timeuuid => 16,
            _ => return None,
        })
    }
}

/// How one bind marker's values are made.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueSpec {
    /// Which value: the number drawn (the key space).
    pub population: Distribution,
    /// Length of text and blobs, element count of collections (`None`: text is the number itself,
    /// collections hold 4 elements).
    pub size: Option<Distribution>,
    /// Timestamps and timeuuids take the time of the request instead of the drawn number.
    pub now: bool,
    /// A nosqlbench binding: the value is this chain applied to the operation's cycle.
    pub function: Option<std::sync::Arc<crate::nb::function::Chain>>,
    /// The value kept for the operation's key between operations (its `state`).
    pub state: Option<StateRef>,
}

/// A value taken from the state kept per key (a compare-and-set's expected and new value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateRef {
    /// `state`: the key's value (0 until an operation sets it).
    Current,
    /// `state + 1`: the key's value plus one, which becomes its value when the operation succeeds
    /// (and, for a conditional one, is applied).
    Next,
}

impl ValueSpec {
    pub fn of(population: Distribution) -> Self {
        ValueSpec {
            population,
            size: None,
            now: false,
            function: None,
            state: None,
        }
    }
}

/// Random printable text made once; text values are windows into it, so a value costs no
/// allocation and no random-number generation.
#[derive(Debug)]
pub struct TextPool {
    text: Vec<u8>,
}

impl TextPool {
    pub fn new(seed: u64) -> Self {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let text = (0..65_536u64)
            .map(|i| ALPHABET[(mix(seed, i, 99) % ALPHABET.len() as u64) as usize])
            .collect();
        TextPool { text }
    }

    /// A window of `len` characters chosen by `pick`.
    pub fn slice(&self, pick: u64, len: usize) -> &[u8] {
        let len = len.min(self.text.len());
        let start = (pick % (self.text.len() - len + 1) as u64) as usize;
        &self.text[start..start + len]
    }
}

/// What a value is made from besides its number.
pub struct Context<'a> {
    pub text: &'a TextPool,
    /// The time of the request, nanoseconds since the Unix epoch (for `now`).
    pub now_nanos: u128,
    /// Unique per operation (a timeuuid's clock sequence and node).
    pub unique: u64,
}

const SALT_SIZE: u64 = 0x5153;
const SALT_ELEMENT: u64 = 0xE1E7;
/// Collections hold this many elements when no size is given.
const DEFAULT_ELEMENTS: i64 = 4;

/// 100-ns intervals between the UUID epoch (1582-10-15) and the Unix epoch.
const UUID_EPOCH_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

/// A version-1 (time-based) UUID for `unix_nanos`, with clock sequence and node from `unique`.
pub fn timeuuid(unix_nanos: u128, unique: u64) -> [u8; 16] {
    let ticks = (unix_nanos / 100) as u64 + UUID_EPOCH_OFFSET;
    let mut id = [0u8; 16];
    id[0..4].copy_from_slice(&(ticks as u32).to_be_bytes());
    id[4..6].copy_from_slice(&((ticks >> 32) as u16).to_be_bytes());
    id[6..8].copy_from_slice(&((((ticks >> 48) as u16) & 0x0FFF) | 0x1000).to_be_bytes());
    // 14 bits of clock sequence (variant 10xx) and 48 bits of node, multicast bit set as RFC 4122
    // asks of node ids that are not a MAC address.
    let clock_seq = ((unique >> 48) as u16 & 0x3FFF) | 0x8000;
    id[8..10].copy_from_slice(&clock_seq.to_be_bytes());
    id[10..16].copy_from_slice(&unique.to_be_bytes()[2..8]);
    id[10] |= 0x01;
    id
}

/// Writes the whole number `n` as `ty` where the type is one (the integers, varint, decimal, a
/// timestamp's milliseconds, a date's days since the epoch, a time's nanoseconds of the day);
/// `false`, writing nothing, for any other type.
pub fn write_whole(ty: &CqlType, n: i64, out: &mut Vec<u8>) -> bool {
    match ty {
        CqlType::Boolean => out.push(u8::from(n & 1 == 1)),
        CqlType::TinyInt => out.push(n as i8 as u8),
        CqlType::SmallInt => out.extend_from_slice(&(n as i16).to_be_bytes()),
        CqlType::Int => out.extend_from_slice(&(n as i32).to_be_bytes()),
        CqlType::BigInt | CqlType::Counter | CqlType::Timestamp => {
            out.extend_from_slice(&n.to_be_bytes())
        }
        CqlType::Varint => varint(n, out),
        CqlType::Decimal => {
            out.extend_from_slice(&0i32.to_be_bytes());
            varint(n, out);
        }
        CqlType::Date => {
            let days = (1i64 << 31) + n;
            out.extend_from_slice(&(days as u32).to_be_bytes());
        }
        CqlType::Time => {
            let nanos = n.rem_euclid(86_400 * 1_000_000_000);
            out.extend_from_slice(&nanos.to_be_bytes());
        }
        _ => return false,
    }
    true
}

/// Writes the value of `spec` for the drawn number `n` as `ty` (its bytes, without the length).
pub fn write(ty: &CqlType, spec: &ValueSpec, n: i64, ctx: &Context, out: &mut Vec<u8>) {
    let time_now = spec.now && *ty == CqlType::Timestamp;
    if !time_now && write_whole(ty, n, out) {
        return;
    }
    let size = |n: i64| {
        spec.size
            .as_ref()
            .map(|d| d.sample(n as u64, mix(n as u64, 0, SALT_SIZE)).max(0) as usize)
    };
    match ty {
        CqlType::Ascii | CqlType::Text => text(n, size(n), ctx, out),
        CqlType::Blob => {
            let len = size(n).unwrap_or(8);
            let prefix = n.to_be_bytes();
            out.extend_from_slice(&prefix[..len.min(8)]);
            if len > 8 {
                out.extend_from_slice(ctx.text.slice(mix(n as u64, 1, 0), len - 8));
            }
        }
        CqlType::Float => out.extend_from_slice(&(n as f32).to_be_bytes()),
        CqlType::Double => out.extend_from_slice(&(n as f64).to_be_bytes()),
        // `now` (every other whole-number type was written above).
        CqlType::Timestamp => {
            let ms = (ctx.now_nanos / 1_000_000) as i64;
            out.extend_from_slice(&ms.to_be_bytes());
        }
        CqlType::Uuid => {
            let mut id = [0u8; 16];
            id[..8].copy_from_slice(&mix(n as u64, 0, 0x0001_D001).to_be_bytes());
            id[8..].copy_from_slice(&mix(n as u64, 1, 0x0001_D001).to_be_bytes());
            id[6] = (id[6] & 0x0F) | 0x40; // version 4
            id[8] = (id[8] & 0x3F) | 0x80; // RFC 4122 variant
            out.extend_from_slice(&id);
        }
        CqlType::Timeuuid => {
            let (nanos, unique) = if spec.now {
                (ctx.now_nanos, ctx.unique)
            } else {
                (n.max(0) as u128 * 1_000_000, mix(n as u64, 2, 0x0001_D001))
            };
            out.extend_from_slice(&timeuuid(nanos, unique));
        }
        CqlType::Inet => out.extend_from_slice(&(n as u32).to_be_bytes()),
        CqlType::Duration => {
            // months, days, nanoseconds as zig-zag vints: a duration of n seconds.
            vint(0, out);
            vint(0, out);
            vint(n.saturating_mul(1_000_000_000), out);
        }
        _ => write_composite(ty, spec, n, size(n), ctx, out),
    }
}

/// [`write`] for collections, tuples, UDTs and vectors (`size`: the drawn element count).
fn write_composite(
    ty: &CqlType,
    spec: &ValueSpec,
    n: i64,
    size: Option<usize>,
    ctx: &Context,
    out: &mut Vec<u8>,
) {
    let count = size.map_or(DEFAULT_ELEMENTS, |c| c as i64);
    match ty {
        CqlType::List(element) | CqlType::Set(element) => {
            out.extend_from_slice(&(count as i32).to_be_bytes());
            for i in 0..count {
                let e = element_number(n, i);
                with_length(out, |out| write(element, &plain(spec), e, ctx, out));
            }
        }
        CqlType::Map(key, value) => {
            out.extend_from_slice(&(count as i32).to_be_bytes());
            for i in 0..count {
                // Keys differ by construction, so the map has `count` entries.
                let k = n.wrapping_mul(1_000_003).wrapping_add(i);
                with_length(out, |out| write(key, &plain(spec), k, ctx, out));
                let v = element_number(n, i);
                with_length(out, |out| write(value, &plain(spec), v, ctx, out));
            }
        }
        CqlType::Tuple(fields) => {
            for (i, field) in fields.iter().enumerate() {
                let e = element_number(n, i as i64);
                with_length(out, |out| write(field, &plain(spec), e, ctx, out));
            }
        }
        CqlType::Udt(fields) => {
            for (i, (_, field)) in fields.iter().enumerate() {
                let e = element_number(n, i as i64);
                with_length(out, |out| write(field, &plain(spec), e, ctx, out));
            }
        }
        CqlType::Vector(element, dimensions) => {
            for i in 0..i64::from(*dimensions) {
                let e = element_number(n, i) % 1000;
                match element.fixed_size() {
                    Some(_) => write(element, &plain(spec), e, ctx, out),
                    None => {
                        let mut item = Vec::new();
                        write(element, &plain(spec), e, ctx, &mut item);
                        vint_unsigned(item.len() as u64, out);
                        out.extend_from_slice(&item);
                    }
                }
            }
        }
        // Scalars are written by `write`.
        _ => {}
    }
}

/// The spec an element of a collection is written with: the collection's own timing, no size
/// (an element's text is its number).
fn plain(spec: &ValueSpec) -> ValueSpec {
    ValueSpec {
        population: spec.population,
        size: None,
        now: spec.now,
        function: None,
        state: None,
    }
}

fn element_number(n: i64, i: i64) -> i64 {
    (mix(n as u64, i as u64, SALT_ELEMENT) >> 33) as i64
}

/// Text of `len` characters (the number itself when no length is given) that starts with the
/// number's digits, so that different numbers give different texts whenever the length holds them.
fn text(n: i64, len: Option<usize>, ctx: &Context, out: &mut Vec<u8>) {
    use std::io::Write as _;
    let start = out.len();
    let _ = write!(out, "{n}");
    if let Some(len) = len {
        let digits = out.len() - start;
        if len < digits {
            out.truncate(start + len);
        } else {
            out.extend_from_slice(ctx.text.slice(mix(n as u64, 3, 0), len - digits));
        }
    }
}

fn with_length(out: &mut Vec<u8>, fill: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.extend_from_slice(&0i32.to_be_bytes());
    fill(out);
    let len = (out.len() - at - 4) as i32;
    out[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

/// Two's complement, big-endian, in as few bytes as hold the sign.
fn varint(n: i64, out: &mut Vec<u8>) {
    let bytes = n.to_be_bytes();
    let mut skip = 0;
    while skip < 7 {
        let (b, next) = (bytes[skip], bytes[skip + 1]);
        let redundant = (b == 0 && next & 0x80 == 0) || (b == 0xFF && next & 0x80 != 0);
        if !redundant {
            break;
        }
        skip += 1;
    }
    out.extend_from_slice(&bytes[skip..]);
}

/// CQL's signed vint: zig-zag, then the unsigned form.
fn vint(n: i64, out: &mut Vec<u8>) {
    vint_unsigned(((n << 1) ^ (n >> 63)) as u64, out);
}

/// CQL's unsigned vint: the count of extra bytes as leading one bits of the first byte.
fn vint_unsigned(v: u64, out: &mut Vec<u8>) {
    let bits = 64 - v.leading_zeros().min(63) as usize;
    let extra = bits.saturating_sub(7).div_ceil(7).min(8);
    if extra == 8 {
        out.push(0xFF);
        out.extend_from_slice(&v.to_be_bytes());
        return;
    }
    let bytes = v.to_be_bytes();
    let mut first = bytes[7 - extra];
    first |= !(0xFFu8 >> extra);
    out.push(first);
    out.extend_from_slice(&bytes[8 - extra..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(ty: &CqlType, spec: &ValueSpec, n: i64) -> Vec<u8> {
        let pool = TextPool::new(1);
        let ctx = Context {
            text: &pool,
            now_nanos: 1_700_000_000_000_000_000,
            unique: 9,
        };
        let mut out = Vec::new();
        write(ty, spec, n, &ctx, &mut out);
        out
    }

    fn spec() -> ValueSpec {
        ValueSpec::of(Distribution::uniform(1, 100))
    }

    #[test]
    fn the_same_number_gives_the_same_value_and_different_numbers_different_keys() {
        let sized = ValueSpec {
            size: Some(Distribution::uniform(10, 20)),
            ..spec()
        };
        assert_eq!(
            value(&CqlType::Text, &sized, 42),
            value(&CqlType::Text, &sized, 42)
        );
        assert_ne!(
            value(&CqlType::Text, &sized, 42),
            value(&CqlType::Text, &sized, 43)
        );
        let len = value(&CqlType::Text, &sized, 42).len();
        assert!((10..=20).contains(&len), "{len}");
        assert_eq!(value(&CqlType::Text, &spec(), 42), b"42");
        assert_eq!(
            value(&CqlType::Uuid, &spec(), 5),
            value(&CqlType::Uuid, &spec(), 5)
        );
        assert_eq!(value(&CqlType::Uuid, &spec(), 5)[6] >> 4, 4);
    }

    #[test]
    fn numbers_are_written_as_their_types() {
        assert_eq!(value(&CqlType::Int, &spec(), -2), (-2i32).to_be_bytes());
        assert_eq!(value(&CqlType::BigInt, &spec(), 7), 7i64.to_be_bytes());
        assert_eq!(value(&CqlType::Varint, &spec(), 127), [0x7F]);
        assert_eq!(value(&CqlType::Varint, &spec(), 128), [0x00, 0x80]);
        assert_eq!(value(&CqlType::Varint, &spec(), -129), [0xFF, 0x7F]);
        assert_eq!(value(&CqlType::Double, &spec(), 3), 3f64.to_be_bytes());
        let now = ValueSpec {
            now: true,
            function: None,
            state: None,
            ..spec()
        };
        assert_eq!(
            value(&CqlType::Timestamp, &now, 1),
            1_700_000_000_000i64.to_be_bytes()
        );
        assert_eq!(value(&CqlType::Timeuuid, &now, 1)[6] >> 4, 1);
    }

    #[test]
    fn collections_carry_their_count_and_vectors_their_dimensions() {
        let three = ValueSpec {
            size: Some(Distribution::fixed(3)),
            ..spec()
        };
        let list = value(&CqlType::List(Box::new(CqlType::Int)), &three, 9);
        assert_eq!(&list[..4], &3i32.to_be_bytes());
        assert_eq!(list.len(), 4 + 3 * (4 + 4));
        let map = value(
            &CqlType::Map(Box::new(CqlType::Int), Box::new(CqlType::Text)),
            &three,
            9,
        );
        assert_eq!(&map[..4], &3i32.to_be_bytes());
        let vector = value(&CqlType::Vector(Box::new(CqlType::Float), 8), &spec(), 9);
        assert_eq!(vector.len(), 32);
    }

    #[test]
    fn vints_use_cqls_layout() {
        let mut out = Vec::new();
        vint_unsigned(5, &mut out);
        assert_eq!(out, [5]);
        out.clear();
        vint_unsigned(300, &mut out);
        assert_eq!(out, [0x81, 0x2C]);
        out.clear();
        vint(-1, &mut out);
        assert_eq!(out, [1]);
    }

    #[test]
    fn timeuuids_are_version_1_with_the_given_time() {
        let nanos: u128 = 1_763_780_000_123_456_700; // 2025-11-22, an exact multiple of 100 ns
        let id = timeuuid(nanos, mix(7, 42, 0));
        assert_eq!(id[6] >> 4, 1, "version 1");
        assert_eq!(id[8] >> 6, 0b10, "RFC 4122 variant");
        let ticks = (u64::from(u16::from_be_bytes([id[6], id[7]]) & 0x0FFF) << 48)
            | (u64::from(u16::from_be_bytes([id[4], id[5]])) << 32)
            | u64::from(u32::from_be_bytes([id[0], id[1], id[2], id[3]]));
        assert_eq!(u128::from(ticks - UUID_EPOCH_OFFSET) * 100, nanos);
        // Same instant, different operations: different ids.
        assert_ne!(id, timeuuid(nanos, mix(7, 43, 0)));
    }

    #[test]
    fn text_pool_slices_have_the_requested_length() {
        let pool = TextPool::new(1);
        for pick in [0, 1, u64::MAX, 65_535] {
            assert_eq!(pool.slice(pick, 150).len(), 150);
        }
    }
}
