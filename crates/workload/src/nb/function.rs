//! nosqlbench binding functions (a documented subset of its virtdata library): a binding is a
//! chain `Hash(); Mod(100); ToString() -> String` applied to the operation's cycle number, each
//! function with nosqlbench's meaning. A chain is parsed once; evaluating it takes the cycle and
//! gives a [`Val`].

use std::sync::Arc;

use super::murmur::hash128;

/// A value along a chain.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Long(i64),
    Int(i32),
    Double(f64),
    Float(f32),
    Text(Arc<str>),
    /// A UUID's 128 bits, most significant first.
    Uuid(u128),
    /// A point in time, milliseconds since the Unix epoch (java.time.Instant, java.util.Date).
    Instant(i64),
    Bool(bool),
}

impl Val {
    pub fn kind(&self) -> &'static str {
        match self {
            Val::Long(_) => "long",
            Val::Int(_) => "int",
            Val::Double(_) => "double",
            Val::Float(_) => "float",
            Val::Text(_) => "String",
            Val::Uuid(_) => "UUID",
            Val::Instant(_) => "Instant",
            Val::Bool(_) => "boolean",
        }
    }

    /// The value as a whole number, where it is one.
    pub fn as_long(&self) -> Option<i64> {
        match *self {
            Val::Long(v) | Val::Instant(v) => Some(v),
            Val::Int(v) => Some(v.into()),
            Val::Double(v) => Some(v as i64),
            Val::Float(v) => Some(v as i64),
            Val::Bool(v) => Some(v.into()),
            _ => None,
        }
    }

    pub fn as_double(&self) -> Option<f64> {
        match *self {
            Val::Double(v) => Some(v),
            Val::Float(v) => Some(v.into()),
            _ => self.as_long().map(|v| v as f64),
        }
    }

    /// Java's `String.valueOf` of the value.
    pub fn to_text(&self) -> String {
        match self {
            Val::Long(v) | Val::Instant(v) => v.to_string(),
            Val::Int(v) => v.to_string(),
            Val::Double(v) => java_double(*v),
            Val::Float(v) => java_double(f64::from(*v)),
            Val::Text(t) => t.to_string(),
            Val::Uuid(u) => uuid_text(*u),
            Val::Bool(b) => b.to_string(),
        }
    }
}

/// `Double.toString`'s common forms: `100.0`, `3.25`.
fn java_double(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e7 {
        format!("{v:.1}")
    } else {
        v.to_string()
    }
}

pub fn uuid_text(u: u128) -> String {
    let h = format!("{u:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// An argument as written: a number (an `L` suffix allowed), or quoted text.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Int(i64),
    Float(f64),
    Text(String),
    /// A function as an argument (`AlphaNumericString(HashRange(10,20))`), applied to the input.
    Func(Box<Chain>),
}

/// A length given as a number or as a function of the input.
#[derive(Debug, Clone, PartialEq)]
pub enum Size {
    Fixed(i64),
    Of(Box<Chain>),
}

impl Size {
    fn at(&self, x: i64) -> i64 {
        match self {
            Size::Fixed(n) => *n,
            Size::Of(chain) => chain.eval(x as u64).as_long().unwrap_or(0),
        }
    }
}

/// A text a function reads lines or extracts from (`data/lorem_ipsum_full.txt`).
#[derive(Debug, PartialEq)]
pub struct Corpus {
    pub text: String,
    /// Byte offsets where each line starts and ends.
    pub lines: Vec<(usize, usize)>,
}

impl Corpus {
    /// A file's text; its lines as Java's `split("\n")` gives them (trailing empty lines dropped).
    pub fn new(text: String) -> Self {
        let mut lines = Vec::new();
        let mut start = 0;
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                lines.push((start, i));
                start = i + 1;
            }
        }
        lines.push((start, text.len()));
        while lines.last().is_some_and(|(a, b)| a == b) {
            lines.pop();
        }
        if lines.is_empty() {
            lines.push((0, 0));
        }
        Corpus { text, lines }
    }

    /// cqlbench's own text, for a data file that is not there: words one per line, or prose.
    pub fn builtin(kind: super::binding::CorpusKind) -> Self {
        const WORDS: &str = include_str!("words.txt");
        match kind {
            super::binding::CorpusKind::Lines => Corpus::new(WORDS.to_string()),
            super::binding::CorpusKind::Prose => {
                let words: Vec<&str> = WORDS.lines().filter(|w| !w.is_empty()).collect();
                let mut text = String::with_capacity(96 * 1024);
                let mut i = 0u64;
                while text.len() < 90_000 {
                    let w = words[(crate::dist::mix(7, i, 3) % words.len() as u64) as usize];
                    text.push_str(w);
                    text.push(if i % 11 == 10 { '.' } else { ' ' });
                    if i % 11 == 10 {
                        text.push(' ');
                    }
                    i += 1;
                }
                Corpus::new(text)
            }
        }
    }
}

/// One function of a chain.
#[derive(Debug, Clone, PartialEq)]
pub enum Func {
    Identity,
    Add(Arg),
    Mul(Arg),
    Div(Arg),
    Mod(Arg),
    Hash,
    /// `Uniform(min,max)`: a whole number in [min, max] (a uniform double for double bounds),
    /// drawn from the hash of the input.
    UniformInt(i64, i64),
    UniformDouble(f64, f64),
    /// `Normal(mean,stddev)`: a double, drawn from the hash of the input.
    Normal(f64, f64),
    /// `HashRange(min,max)`: min plus the input's hash modulo the range's width (both ends in).
    HashRange(i64, i64),
    /// `HashRangeScaled(scale)`: (hash mod input) × scale, 0 for 0.
    HashRangeScaled(f64),
    ToHashedUuid,
    /// `ToJavaInstant(mul,div)`, `ToDate(mul,div)`: milliseconds x × mul / div.
    ToJavaInstant(i64, i64),
    ToEpochTimeUuid,
    StartingEpochMillis(i64),
    ToString,
    HashedFileExtractToString(Arc<Corpus>, i64, i64),
    HashedLineToString(Arc<Corpus>),
    FixedValue(Val),
    /// `ElapsedNanoTime()`: nanoseconds on the client's monotonic clock (the input is ignored).
    ElapsedNanoTime,
    /// `AlphaNumericString(len)`: `len` characters of 0-9A-Z, each from a hash of the last.
    AlphaNumericString(Size),
    /// `Combinations('A-Z;0-9')`: the input as mixed-radix digits over each position's characters.
    Combinations(Vec<Vec<char>>),
    /// `Template('{}-{}', f1, f2)`: each `{}` replaced by function i of input + i.
    Template(String, Vec<Chain>),
    /// `Clamp(min,max)`, `Min(n)`, `Max(n)`.
    Clamp(i64, i64),
    /// A conversion written `-> int`, `-> String`, `-> double`, …
    Convert(Target),
}

/// The type a `-> TYPE` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Long,
    Int,
    Double,
    Float,
    Text,
    Uuid,
    Instant,
    /// `-> Object` and other types taken as they come.
    Same,
}

impl Target {
    pub fn parse(name: &str) -> Option<Target> {
        let short = name.trim().rsplit('.').next().unwrap_or(name);
        Some(match short {
            "long" | "Long" => Target::Long,
            "int" | "Integer" => Target::Int,
            "double" | "Double" => Target::Double,
            "float" | "Float" => Target::Float,
            "String" | "CharSequence" => Target::Text,
            "UUID" => Target::Uuid,
            "Instant" | "Date" => Target::Instant,
            "Object" | "LocalDate" => Target::Same,
            _ => return None,
        })
    }
}

/// A whole chain, as written in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    pub text: String,
    pub funcs: Vec<Func>,
}

impl Chain {
    /// The value for `cycle`.
    pub fn eval(&self, cycle: u64) -> Val {
        let mut v = Val::Long(cycle as i64);
        for f in &self.funcs {
            v = apply(f, v);
        }
        v
    }
}

/// nosqlbench's `Hash()` of a long: murmur3 of its eight bytes, most significant first, made
/// non-negative.
pub fn hash_long(v: i64) -> i64 {
    let (h1, _) = hash128(&v.to_be_bytes());
    (h1 as i64).wrapping_abs() & i64::MAX
}

fn unit(v: i64) -> f64 {
    // The hash's low 53 bits as a fraction in [0, 1).
    ((hash_long(v) as u64) & ((1 << 53) - 1)) as f64 / (1u64 << 53) as f64
}

fn arith(v: Val, arg: &Arg, op: fn(i64, i64) -> i64, fop: fn(f64, f64) -> f64) -> Val {
    match (v, arg) {
        (Val::Int(a), Arg::Int(b)) => Val::Int(op(a.into(), *b) as i32),
        (Val::Long(a), Arg::Int(b)) | (Val::Instant(a), Arg::Int(b)) => Val::Long(op(a, *b)),
        (v, Arg::Float(b)) => Val::Double(fop(v.as_double().unwrap_or(0.0), *b)),
        (Val::Double(a), Arg::Int(b)) => Val::Double(fop(a, *b as f64)),
        (Val::Float(a), Arg::Int(b)) => Val::Float(fop(a.into(), *b as f64) as f32),
        (v, _) => v,
    }
}

fn apply(f: &Func, v: Val) -> Val {
    match f {
        Func::Identity => v,
        Func::Add(a) => arith(v, a, i64::wrapping_add, |x, y| x + y),
        Func::Mul(a) => arith(v, a, i64::wrapping_mul, |x, y| x * y),
        Func::Div(a) => arith(
            v,
            a,
            |x, y| if y == 0 { 0 } else { x.wrapping_div(y) },
            |x, y| x / y,
        ),
        Func::Mod(a) => arith(
            v,
            a,
            |x, y| if y == 0 { 0 } else { x.wrapping_rem(y) },
            |x, y| x % y,
        ),
        Func::Hash => match v {
            Val::Int(i) => Val::Int((hash_long(i.into()) & i64::from(i32::MAX)) as i32),
            v => Val::Long(hash_long(v.as_long().unwrap_or(0))),
        },
        Func::UniformInt(min, max) => Val::Long(uniform_discrete(
            *min,
            *max,
            hash_long(v.as_long().unwrap_or(0)),
        )),
        Func::UniformDouble(min, max) => {
            Val::Double(min + unit(v.as_long().unwrap_or(0)) * (max - min))
        }
        Func::Normal(mean, sd) => {
            let u = unit(v.as_long().unwrap_or(0)).clamp(1e-12, 1.0 - 1e-12);
            Val::Double(mean + sd * inverse_normal(u))
        }
        Func::HashRange(min, max) => {
            let width = (max - min + 1).max(1);
            Val::Long(min + hash_long(v.as_long().unwrap_or(0)) % width)
        }
        Func::HashRangeScaled(scale) => {
            let x = v.as_long().unwrap_or(0);
            let scaled = if x == 0 {
                0.0
            } else {
                (hash_long(x) % x) as f64 * scale
            };
            Val::Long(scaled as i64)
        }
        Func::ToHashedUuid => {
            let x = v.as_long().unwrap_or(0);
            let msb = (hash_long(x) as u64 & 0xFFFF_FFFF_FFFF_0FFF) | 0x4000;
            let lsb = (hash_long(x.wrapping_add(1)) as u64 & 0x3FFF_FFFF_FFFF_FFFF) | (1 << 63);
            Val::Uuid((u128::from(msb) << 64) | u128::from(lsb))
        }
        Func::ToJavaInstant(mul, div) => {
            let x = v.as_long().unwrap_or(0);
            Val::Instant(x.wrapping_mul(*mul) / (*div).max(1))
        }
        Func::ToEpochTimeUuid => Val::Uuid(epoch_time_uuid(v.as_long().unwrap_or(0))),
        Func::StartingEpochMillis(base) => {
            let x = v.as_long().unwrap_or(0);
            Val::Long(base + x % (i64::MAX - base).max(1))
        }
        Func::ToString => Val::Text(v.to_text().into()),
        Func::HashedFileExtractToString(corpus, min, max) => {
            // Size and position come from the same hash, as nosqlbench takes them.
            let h = hash_long(v.as_long().unwrap_or(0));
            let total = corpus.text.len().max(1) as i64;
            let size = ((min + h % (max - min + 1).max(1)) & i64::from(i32::MAX)) % total;
            let start = (h % (1 << 31)) % (total - size).max(1);
            Val::Text(char_window(&corpus.text, start as usize, size as usize).into())
        }
        Func::HashedLineToString(corpus) => {
            let n = hash_long(v.as_long().unwrap_or(0)) as usize;
            let (a, b) = corpus.lines[n % corpus.lines.len()];
            Val::Text(corpus.text[a..b].into())
        }
        Func::FixedValue(fixed) => fixed.clone(),
        Func::ElapsedNanoTime => Val::Long(elapsed_nanos()),
        Func::AlphaNumericString(size) => {
            const CHARS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
            let x = v.as_long().unwrap_or(0);
            let mut h = x;
            let text: String = (0..size.at(x).max(0))
                .map(|_| {
                    h = hash_long(h);
                    CHARS[(h.rem_euclid(CHARS.len() as i64)) as usize] as char
                })
                .collect();
            Val::Text(text.into())
        }
        Func::Combinations(positions) => {
            Val::Text(combination(positions, v.as_long().unwrap_or(0)).into())
        }
        Func::Template(format, chains) => {
            let x = v.as_long().unwrap_or(0);
            let mut out = String::with_capacity(format.len() + 16);
            let mut parts = format.split("{}");
            out.push_str(parts.next().unwrap_or(""));
            for (i, part) in parts.enumerate() {
                if let Some(chain) = chains.get(i) {
                    out.push_str(&chain.eval(x.wrapping_add(i as i64) as u64).to_text());
                }
                out.push_str(part);
            }
            Val::Text(out.into())
        }
        Func::Clamp(min, max) => match v {
            Val::Double(d) => Val::Double(d.clamp(*min as f64, *max as f64)),
            other => Val::Long(other.as_long().unwrap_or(0).clamp(*min, *max)),
        },
        Func::Convert(target) => convert(v, *target),
    }
}

/// A type-1 UUID for Unix milliseconds (clock sequence and node 0), as `ToEpochTimeUUID()` makes it.
fn epoch_time_uuid(millis: i64) -> u128 {
    let ticks = (millis.wrapping_add(12_219_292_800_000)).wrapping_mul(10_000) as u64;
    let msb = 0x1000
        | ((ticks & 0x0fff_0000_0000_0000) >> 48)
        | ((ticks & 0x0000_ffff_0000_0000) >> 16)
        | ((ticks & 0xffff_ffff) << 32);
    (u128::from(msb) << 64) | (1u128 << 63)
}

/// nosqlbench's discrete `Uniform(lo,hi)`: a 1000-point table of the inverse CDF over [lo, hi],
/// interpolated at the input's hash.
fn uniform_discrete(lo: i64, hi: i64, hash: i64) -> i64 {
    let n = (hi - lo + 1).max(1) as f64;
    let icdf = |p: f64| -> f64 {
        if p > (n - 1.0) / n {
            hi as f64
        } else if p <= 1.0 / n {
            lo as f64
        } else {
            lo as f64 + (p * n).ceil() - 1.0
        }
    };
    let at = |s: usize| icdf(s.min(999) as f64 / 1000.0);
    let sp = hash as f64 * (999.0 / i64::MAX as f64);
    let i = sp as usize;
    let f = sp - i as f64;
    (at(i) * (1.0 - f) + at(i + 1) * f) as i64
}

/// Nanoseconds since the first call in this process (Java's `System.nanoTime()` has an arbitrary
/// origin too).
fn elapsed_nanos() -> i64 {
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let origin = ORIGIN.get_or_init(std::time::Instant::now);
    origin.elapsed().as_nanos() as i64
}

/// `x` written as mixed-radix digits, most significant first, each over its position's characters.
fn combination(positions: &[Vec<char>], x: i64) -> String {
    let mut rest = x.max(0) as u128;
    let mut digits = Vec::with_capacity(positions.len());
    for chars in positions.iter().rev() {
        let radix = chars.len().max(1) as u128;
        digits.push(chars.get((rest % radix) as usize).copied().unwrap_or('?'));
        rest /= radix;
    }
    digits.iter().rev().collect()
}

/// `len` bytes of `text` from `start`, moved to character boundaries.
fn char_window(text: &str, start: usize, len: usize) -> &str {
    let mut a = start;
    while !text.is_char_boundary(a) {
        a -= 1;
    }
    let mut b = (a + len).min(text.len());
    while !text.is_char_boundary(b) {
        b -= 1;
    }
    &text[a..b]
}

fn convert(v: Val, target: Target) -> Val {
    match target {
        Target::Same => v,
        Target::Text => Val::Text(v.to_text().into()),
        Target::Long => v.as_long().map_or(v, Val::Long),
        Target::Int => match v.as_long() {
            Some(l) => Val::Int(l as i32),
            None => v,
        },
        Target::Double => v.as_double().map_or(v, Val::Double),
        Target::Float => match v.as_double() {
            Some(d) => Val::Float(d as f32),
            None => v,
        },
        Target::Instant => v.as_long().map_or(v, Val::Instant),
        Target::Uuid => v,
    }
}

/// The standard normal's quantile (Acklam's rational approximation, relative error < 1.2e-9).
fn inverse_normal(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::{hash_long, uniform_discrete, uuid_text, Chain, Func, Val};

    /// Values nosqlbench's own classes give (its Murmur3F and samplers run on these inputs).
    #[test]
    fn functions_give_nosqlbench_s_values() {
        assert_eq!(hash_long(0), 2_945_182_322_382_062_539);
        assert_eq!(hash_long(1), 6_292_367_497_774_912_474);
        assert_eq!(hash_long(42), 8_623_491_988_607_824_794);
        assert_eq!(hash_long(-1), 6_853_156_495_446_839_949);
        let uniform = |lo, hi, x| uniform_discrete(lo, hi, hash_long(x));
        let got: Vec<i64> = [0, 1, 2, 3, 42]
            .iter()
            .map(|&x| uniform(0, 100, x))
            .collect();
        assert_eq!(got, [32, 68, 89, 87, 94]);
        let got: Vec<i64> = [0, 1, 2, 3, 42]
            .iter()
            .map(|&x| uniform(1, 10, x))
            .collect();
        assert_eq!(got, [4, 7, 9, 9, 10]);
        let range = Chain {
            text: String::new(),
            funcs: vec![Func::HashRange(50, 150)],
        };
        let got: Vec<Val> = [0, 1, 2, 3, 42].iter().map(|&x| range.eval(x)).collect();
        assert_eq!(got, [102, 111, 88, 114, 69].map(Val::Long));
        let uuid = Chain {
            text: String::new(),
            funcs: vec![Func::ToHashedUuid],
        };
        let Val::Uuid(u) = uuid.eval(0) else {
            panic!("a uuid")
        };
        assert_eq!(uuid_text(u), "28df63b7-cc57-43cb-9752-fae69d1653da");
        let Val::Uuid(u) = uuid.eval(42) else {
            panic!("a uuid")
        };
        assert_eq!(uuid_text(u), "77accc46-4065-439a-8e5b-6c3fa1b4a3c9");
    }
}
