//! Reading a binding's text (`Hash(); Mod(100); ToString() -> String`) into a [`Chain`].

use std::sync::Arc;

use super::function::{Arg, Chain, Corpus, Func, Size, Target, Val};

/// The functions this front end knows, for messages.
pub const FUNCTIONS: &str = "Identity, Add, Mul, Div, Mod, Hash, Uniform, Normal, HashRange, \
HashRangeScaled, ToHashedUUID, ToJavaInstant, ToDate, ToEpochTimeUUID, StartingEpochMillis, \
ToString, HashedFileExtractToString, HashedLineToString, FixedValue, ToLong, ToInt, ToDouble, \
ToFloat, ToUUID, ElapsedNanoTime, Discard, FirstLines, AlphaNumericString, Combinations, Template, \
Clamp, Min, Max";

/// Finds the text a function names (`'data/lorem_ipsum_full.txt'`): the file beside the workload,
/// else a built-in corpus.
pub type Corpora<'a> = dyn FnMut(&str, CorpusKind) -> Arc<Corpus> + 'a;

/// What a named file is read for, so that the built-in fallback fits: lines of words, or prose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorpusKind {
    Lines,
    Prose,
}

/// Parses a binding's chain, or says what is wrong with it (the caller adds the binding's name and
/// line).
pub fn parse(text: &str, corpora: &mut Corpora) -> Result<Chain, String> {
    let body = text.trim();
    let body = body.strip_prefix("compose ").unwrap_or(body);
    let mut funcs = Vec::new();
    for segment in split_top(body, ';')? {
        for (i, part) in split_arrows(segment).into_iter().enumerate() {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            if !part.contains('(') {
                let target =
                    Target::parse(part).ok_or_else(|| format!("unknown type '{part}' after ->"))?;
                // A type before the first function is the input's; only later ones convert.
                if i > 0 || !funcs.is_empty() {
                    funcs.push(Func::Convert(target));
                }
                continue;
            }
            funcs.push(call(part, corpora)?);
        }
    }
    Ok(Chain {
        text: text.trim().to_string(),
        funcs,
    })
}

/// `text` split at `sep` outside parentheses and quotes; an unbalanced parenthesis is an error.
fn split_top(text: &str, sep: char) -> Result<Vec<&str>, String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth < 0 {
                    return Err("a ')' has no matching '('".into());
                }
            }
            (None, c) if c == sep && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err("a '(' is not closed".into());
    }
    if quote.is_some() {
        return Err("a quoted argument is not closed".into());
    }
    parts.push(&text[start..]);
    Ok(parts)
}

/// `Uniform(0,5)->int` as its parts around `->` outside parentheses.
fn split_arrows(segment: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = segment.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b'-' if depth == 0 && bytes.get(i + 1) == Some(&b'>') => {
                parts.push(&segment[start..i]);
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&segment[start..]);
    parts
}

/// One function call: `Name(arg,…)`.
fn call(text: &str, corpora: &mut Corpora) -> Result<Func, String> {
    let open = text.find('(').unwrap_or(text.len());
    let name = text[..open].trim();
    let inner = text[open..]
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .ok_or_else(|| format!("'{text}' is not a function call Name(arguments)"))?;
    let args: Vec<Arg> = split_top(inner, ',')?
        .into_iter()
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(|a| arg(a, corpora).map_err(|e| format!("{name}: {e}")))
        .collect::<Result<_, _>>()?;
    function(name, &args, corpora)
}

fn arg(text: &str, corpora: &mut Corpora) -> Result<Arg, String> {
    for q in ['\'', '"'] {
        if let Some(inner) = text.strip_prefix(q).and_then(|t| t.strip_suffix(q)) {
            return Ok(Arg::Text(inner.to_string()));
        }
    }
    let number = text.trim_end_matches(['L', 'l']);
    if let Ok(v) = number.parse::<i64>() {
        return Ok(Arg::Int(v));
    }
    let number = text.trim_end_matches(['d', 'D', 'f', 'F']);
    if let Ok(v) = number.parse::<f64>() {
        return Ok(Arg::Float(v));
    }
    if text.contains('(') {
        return Ok(Arg::Func(Box::new(parse(text, corpora)?)));
    }
    Err(format!(
        "the argument '{text}' is neither a number nor quoted text"
    ))
}

fn int(args: &[Arg], at: usize, name: &str) -> Result<i64, String> {
    match args.get(at) {
        Some(Arg::Int(v)) => Ok(*v),
        Some(Arg::Float(v)) if v.fract() == 0.0 => Ok(*v as i64),
        _ => Err(format!(
            "{name} needs a whole number as argument {}",
            at + 1
        )),
    }
}

fn float(args: &[Arg], at: usize, name: &str) -> Result<f64, String> {
    match args.get(at) {
        Some(Arg::Int(v)) => Ok(*v as f64),
        Some(Arg::Float(v)) => Ok(*v),
        _ => Err(format!("{name} needs a number as argument {}", at + 1)),
    }
}

fn text_arg<'a>(args: &'a [Arg], at: usize, name: &str) -> Result<&'a str, String> {
    match args.get(at) {
        Some(Arg::Text(t)) => Ok(t),
        _ => Err(format!("{name} needs quoted text as argument {}", at + 1)),
    }
}

fn count(args: &[Arg], allowed: &[usize], name: &str) -> Result<(), String> {
    if allowed.contains(&args.len()) {
        return Ok(());
    }
    let want: Vec<String> = allowed.iter().map(usize::to_string).collect();
    Err(format!(
        "{name} takes {} argument(s), not {}",
        want.join(" or "),
        args.len()
    ))
}

fn one_number(args: &[Arg], name: &str) -> Result<Arg, String> {
    count(args, &[1], name)?;
    match &args[0] {
        Arg::Text(_) => Err(format!("{name} needs a number")),
        a => Ok(a.clone()),
    }
}

fn function(name: &str, args: &[Arg], corpora: &mut Corpora) -> Result<Func, String> {
    let none = |f: Func| count(args, &[0], name).map(|_| f);
    Ok(match name {
        "Identity" => none(Func::Identity)?,
        "Add" => Func::Add(one_number(args, name)?),
        "Mul" => Func::Mul(one_number(args, name)?),
        "Div" => Func::Div(one_number(args, name)?),
        "Mod" => Func::Mod(one_number(args, name)?),
        "Hash" => none(Func::Hash)?,
        "Uniform" => {
            count(args, &[2], name)?;
            match (&args[0], &args[1]) {
                (Arg::Int(a), Arg::Int(b)) => Func::UniformInt(*a, *b),
                _ => Func::UniformDouble(float(args, 0, name)?, float(args, 1, name)?),
            }
        }
        "Normal" | "Gaussian" => {
            count(args, &[2], name)?;
            Func::Normal(float(args, 0, name)?, float(args, 1, name)?)
        }
        "HashRange" => {
            count(args, &[1, 2], name)?;
            match args.len() {
                1 => Func::HashRange(0, int(args, 0, name)?),
                _ => Func::HashRange(int(args, 0, name)?, int(args, 1, name)?),
            }
        }
        "HashRangeScaled" => {
            count(args, &[0, 1], name)?;
            Func::HashRangeScaled(if args.is_empty() {
                1.0
            } else {
                float(args, 0, name)?
            })
        }
        "ToHashedUUID" => none(Func::ToHashedUuid)?,
        "ToJavaInstant" | "ToDate" => {
            count(args, &[0, 1, 2], name)?;
            let mul = if args.is_empty() {
                1
            } else {
                int(args, 0, name)?
            };
            let div = if args.len() < 2 {
                1
            } else {
                int(args, 1, name)?
            };
            Func::ToJavaInstant(mul, div)
        }
        "ToEpochTimeUUID" => none(Func::ToEpochTimeUuid)?,
        "StartingEpochMillis" => {
            count(args, &[1], name)?;
            let when = text_arg(args, 0, name)?;
            Func::StartingEpochMillis(epoch_millis(when).ok_or_else(|| {
                format!("StartingEpochMillis: '{when}' is not a time like '2018-10-02 04:00:00'")
            })?)
        }
        "ToString" => none(Func::ToString)?,
        "HashedFileExtractToString" => {
            count(args, &[3], name)?;
            let corpus = corpora(text_arg(args, 0, name)?, CorpusKind::Prose);
            Func::HashedFileExtractToString(corpus, int(args, 1, name)?, int(args, 2, name)?)
        }
        "HashedLineToString" => {
            count(args, &[1], name)?;
            Func::HashedLineToString(corpora(text_arg(args, 0, name)?, CorpusKind::Lines))
        }
        "FixedValue" | "FixedValues" => {
            count(args, &[1], name)?;
            Func::FixedValue(match &args[0] {
                Arg::Int(v) => Val::Long(*v),
                Arg::Float(v) => Val::Double(*v),
                Arg::Text(t) => Val::Text(t.as_str().into()),
                Arg::Func(_) => return Err(format!("{name} needs a value, not a function")),
            })
        }
        "ElapsedNanoTime" => none(Func::ElapsedNanoTime)?,
        "AlphaNumericString" => {
            count(args, &[1], name)?;
            Func::AlphaNumericString(size(&args[0], name)?)
        }
        "Combinations" => {
            count(args, &[1], name)?;
            Func::Combinations(combinations(text_arg(args, 0, name)?)?)
        }
        "Template" => {
            let format = text_arg(args, 0, name)?.to_string();
            let chains = args[1..]
                .iter()
                .map(|a| match a {
                    Arg::Func(chain) => Ok((**chain).clone()),
                    _ => Err(format!(
                        "{name}: every argument after the format is a function"
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?;
            if format.matches("{}").count() != chains.len() {
                return Err(format!(
                    "{name}: the format has {} '{{}}' for {} functions",
                    format.matches("{}").count(),
                    chains.len()
                ));
            }
            Func::Template(format, chains)
        }
        "Clamp" => {
            count(args, &[2], name)?;
            Func::Clamp(int(args, 0, name)?, int(args, 1, name)?)
        }
        "Min" => {
            count(args, &[1], name)?;
            Func::Clamp(i64::MIN, int(args, 0, name)?)
        }
        "Max" => {
            count(args, &[1], name)?;
            Func::Clamp(int(args, 0, name)?, i64::MAX)
        }
        "Discard" => none(Func::FixedValue(Val::Text("discard".into())))?,
        "FirstLines" => {
            count(args, &[1, 2], name)?;
            let corpus = corpora(text_arg(args, 0, name)?, CorpusKind::Lines);
            let n = if args.len() == 2 {
                int(args, 1, name)?.max(1) as usize
            } else {
                1
            };
            // nosqlbench joins lines [0, n-1) for n > 1 (its own off-by-one), the first line for 1.
            let take = if n == 1 { 1 } else { n - 1 };
            let text: String = corpus
                .lines
                .iter()
                .take(take)
                .map(|&(a, b)| &corpus.text[a..b])
                .collect();
            Func::FixedValue(Val::Text(text.into()))
        }
        "ToLong" => none(Func::Convert(Target::Long))?,
        "ToInt" => none(Func::Convert(Target::Int))?,
        "ToDouble" => none(Func::Convert(Target::Double))?,
        "ToFloat" => none(Func::Convert(Target::Float))?,
        "ToUUID" => none(Func::ToHashedUuid)?,
        _ => {
            return Err(format!(
                "the function '{name}' is not supported (supported: {FUNCTIONS})"
            ))
        }
    })
}

/// A length: a whole number or a function of the input.
fn size(arg: &Arg, name: &str) -> Result<Size, String> {
    match arg {
        Arg::Int(n) => Ok(Size::Fixed(*n)),
        Arg::Func(chain) => Ok(Size::Of(chain.clone())),
        _ => Err(format!(
            "{name} needs a length: a whole number or a function"
        )),
    }
}

/// `A-Z;0-9` (positions split by `;` or `,`, each a set of characters with ranges, `X*3` three
/// positions of X).
fn combinations(spec: &str) -> Result<Vec<Vec<char>>, String> {
    let mut positions = Vec::new();
    for part in spec
        .split([';', ','])
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (set, times) = match part.rsplit_once('*') {
            Some((set, n)) => (
                set,
                n.trim().parse::<usize>().map_err(|_| {
                    format!("Combinations: '{part}' repeats a set by a whole number")
                })?,
            ),
            None => (part, 1),
        };
        let chars: Vec<char> = set.chars().collect();
        let mut expanded = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            if i + 2 < chars.len() && chars[i + 1] == '-' {
                expanded.extend(chars[i]..=chars[i + 2]);
                i += 3;
            } else {
                expanded.push(chars[i]);
                i += 1;
            }
        }
        for _ in 0..times {
            positions.push(expanded.clone());
        }
    }
    if positions.is_empty() {
        return Err("Combinations needs at least one position, e.g. 'A-Z;0-9'".into());
    }
    Ok(positions)
}

/// `2018-10-02 04:00:00` (or with `T`, or a date alone), UTC, as Unix milliseconds.
fn epoch_millis(text: &str) -> Option<i64> {
    let t = text.trim();
    let iso = if t.len() == 10 {
        format!("{t}T00:00:00Z")
    } else {
        format!("{}Z", t.replacen(' ', "T", 1).trim_end_matches('Z'))
    };
    cqlbench_units::time::parse_rfc3339(&iso).map(|s| (s * 1000.0).round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpora() -> impl FnMut(&str, CorpusKind) -> Arc<Corpus> {
        |_: &str, _| Arc::new(Corpus::new("alpha\nbeta\ngamma\n".repeat(50)))
    }

    fn chain(text: &str) -> Chain {
        parse(text, &mut corpora()).expect("parses")
    }

    #[test]
    fn chains_of_the_cql_baselines_parse_and_evaluate() {
        let part = chain("Div(1000); ToString() -> String");
        assert_eq!(part.eval(2500), Val::Text("2".into()));
        let clust = chain("Mod(1000); ToString() -> String");
        assert_eq!(clust.eval(2500), Val::Text("500".into()));
        let write = chain("Hash(); Uniform(0,100)->int; ToString() -> String");
        for cycle in 0..200 {
            let Val::Text(t) = write.eval(cycle) else {
                panic!("text")
            };
            let v: i64 = t.parse().expect("a number");
            assert!((0..=100).contains(&v), "{v}");
        }
        let time = chain("Mul(100L); Div(10000L); ToJavaInstant();");
        assert_eq!(time.eval(1_000_000), Val::Instant(10_000));
        let value = chain("Normal(0.0,5.0); Add(100.0) -> double");
        assert!(matches!(value.eval(7), Val::Double(v) if (70.0..130.0).contains(&v)));
        let id = chain("Mod(10000); ToHashedUUID() -> java.util.UUID");
        assert_eq!(id.eval(3), id.eval(10_003));
        assert_ne!(id.eval(3), id.eval(4));
        let word = chain("HashedLineToString('data/variable_words.txt')");
        assert!(matches!(word.eval(9), Val::Text(t) if ["alpha", "beta", "gamma"].contains(&&*t)));
    }

    #[test]
    fn hash_is_nosqlbench_s_murmur3_of_the_long() {
        // murmur3_128 (seed 0) of 5L's eight big-endian bytes: h1 = 0x3df498b19568b584.
        assert_eq!(super::super::function::hash_long(5), 0x3df4_98b1_9568_b584);
    }

    #[test]
    fn strings_made_of_combinations_templates_and_hashes() {
        let text = |t: &str, x: u64| match chain(t).eval(x) {
            Val::Text(s) => s.to_string(),
            other => panic!("{t} gave {other:?}"),
        };
        let combos: Vec<String> = [0, 1, 2, 5, 6]
            .iter()
            .map(|&x| text("Combinations('A-C;0-1')", x))
            .collect();
        assert_eq!(combos, ["A0", "A1", "B0", "C1", "A0"]);
        assert_eq!(text("Combinations('0-9*3')", 42), "042");
        assert_eq!(text("Template('{}-{}', Identity(), Add(10))", 5), "5-16");
        for x in 0..50 {
            let s = text("AlphaNumericString(HashRange(10,20))", x);
            assert!((10..=20).contains(&s.len()), "{s}");
            assert!(
                s.bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()),
                "{s}"
            );
            assert_eq!(
                s,
                text("AlphaNumericString(HashRange(10,20))", x),
                "the same cycle, the same text"
            );
        }
        assert_eq!(chain("Clamp(0,10)").eval(42), Val::Long(10));
        assert!(parse("Template('{}', 5)", &mut corpora())
            .unwrap_err()
            .contains("function"));
    }

    #[test]
    fn bad_chains_say_what_is_wrong() {
        let mut c = corpora();
        let err =
            |t: &str, c: &mut dyn FnMut(&str, CorpusKind) -> Arc<Corpus>| parse(t, c).unwrap_err();
        assert!(err("Hash(; Mod(5)", &mut c).contains("not closed"));
        assert!(err("Mod(5))", &mut c).contains("no matching"));
        let unknown = err("Hash(); Frobnicate(3)", &mut c);
        assert!(
            unknown.contains("'Frobnicate' is not supported"),
            "{unknown}"
        );
        assert!(err("Mod('x')", &mut c).contains("needs a number"));
        assert!(err("Uniform(1)", &mut c).contains("takes 2"));
    }
}
