//! Validation of the CQL map literals users pass on the command line (`--compaction`, `--replication`).
//!
//! The text is spliced into DDL, so it is parsed first: a malformed map must be a one-line error at the
//! start, not a syntax error from the server after the cluster is up. tlp-stress users also append
//! table options after the map (`{...} AND speculative_retry = 'NONE'`, seed 002), which is accepted.

use std::fmt;

/// A parsed `{'key': 'value', ...}` map, kept in order.
#[derive(Debug, Clone, PartialEq)]
pub struct CqlMap {
    pub entries: Vec<(String, CqlValue)>,
}

/// A value inside a map or after `AND name =`.
#[derive(Debug, Clone, PartialEq)]
pub enum CqlValue {
    Text(String),
    Number(String),
    Bool(bool),
    Map(CqlMap),
}

/// A map followed by optional `AND name = value` table options.
#[derive(Debug, Clone, PartialEq)]
pub struct TableOptions {
    pub map: CqlMap,
    pub extra: Vec<(String, CqlValue)>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed {what} '{input}': {reason} (expected e.g. {example})")]
pub struct CqlMapError {
    pub what: &'static str,
    pub input: String,
    pub reason: String,
    pub example: &'static str,
}

impl CqlMap {
    pub fn get(&self, key: &str) -> Option<&CqlValue> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl fmt::Display for CqlValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CqlValue::Text(s) => write!(f, "'{}'", s.replace('\'', "''")),
            CqlValue::Number(n) => f.write_str(n),
            CqlValue::Bool(b) => write!(f, "{b}"),
            CqlValue::Map(m) => write!(f, "{m}"),
        }
    }
}

impl fmt::Display for CqlMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "'{}': {v}", k.replace('\'', "''"))?;
        }
        f.write_str("}")
    }
}

impl fmt::Display for TableOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.map)?;
        for (k, v) in &self.extra {
            write!(f, " AND {k} = {v}")?;
        }
        Ok(())
    }
}

struct Parser<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
}

impl<'a> Parser<'a> {
    fn new(input: &'a str) -> Self {
        Parser {
            chars: input.char_indices().peekable(),
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.chars.peek(), Some((_, c)) if c.is_whitespace()) {
            self.chars.next();
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.peek().map(|&(_, c)| c)
    }

    fn expect(&mut self, wanted: char) -> Result<(), String> {
        match self.peek() {
            Some(c) if c == wanted => {
                self.chars.next();
                Ok(())
            }
            Some(c) => Err(format!("expected '{wanted}' but found '{c}'")),
            None => Err(format!("expected '{wanted}' but the text ended")),
        }
    }

    fn quoted(&mut self) -> Result<String, String> {
        self.expect('\'')?;
        let mut out = String::new();
        loop {
            match self.chars.next() {
                Some((_, '\'')) => {
                    if matches!(self.chars.peek(), Some((_, '\''))) {
                        self.chars.next();
                        out.push('\'');
                    } else {
                        return Ok(out);
                    }
                }
                Some((_, c)) => out.push(c),
                None => return Err("unterminated quoted string".into()),
            }
        }
    }

    fn word(&mut self) -> String {
        self.skip_ws();
        let mut out = String::new();
        while let Some(&(_, c)) = self.chars.peek() {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' {
                out.push(c);
                self.chars.next();
            } else {
                break;
            }
        }
        out
    }

    fn value(&mut self) -> Result<CqlValue, String> {
        match self.peek() {
            Some('\'') => self.quoted().map(CqlValue::Text),
            Some('{') => self.map().map(CqlValue::Map),
            Some(_) => {
                let word = self.word();
                if word.eq_ignore_ascii_case("true") || word.eq_ignore_ascii_case("false") {
                    Ok(CqlValue::Bool(word.eq_ignore_ascii_case("true")))
                } else if !word.is_empty() && word.parse::<f64>().is_ok() {
                    Ok(CqlValue::Number(word))
                } else if word.is_empty() {
                    Err("expected a quoted value, a number or a map".into())
                } else {
                    Err(format!("unquoted value '{word}' (quote text values)"))
                }
            }
            None => Err("expected a value but the text ended".into()),
        }
    }

    fn map(&mut self) -> Result<CqlMap, String> {
        self.expect('{')?;
        let mut entries = Vec::new();
        if self.peek() == Some('}') {
            self.chars.next();
            return Ok(CqlMap { entries });
        }
        loop {
            let key = self.quoted()?;
            if key.is_empty() {
                return Err("empty key".into());
            }
            self.expect(':')?;
            let value = self.value()?;
            entries.push((key, value));
            match self.peek() {
                Some(',') => {
                    self.chars.next();
                }
                Some('}') => {
                    self.chars.next();
                    return Ok(CqlMap { entries });
                }
                Some(c) => return Err(format!("expected ',' or '}}' but found '{c}'")),
                None => return Err("missing closing '}'".into()),
            }
        }
    }

    fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }
}

/// Parses `{'class': 'SizeTieredCompactionStrategy', 'min_threshold': '2'}` optionally followed by
/// `AND name = value` table options. The map must name a `class`.
pub fn parse_table_options(what: &'static str, input: &str) -> Result<TableOptions, CqlMapError> {
    let fail = |reason: String| CqlMapError {
        what,
        input: input.to_string(),
        reason,
        example: "\"{'class': 'SizeTieredCompactionStrategy', 'min_threshold': '2'}\"",
    };
    let mut parser = Parser::new(input);
    let map = parser.map().map_err(fail)?;
    if map.get("class").is_none() {
        return Err(fail("the map has no 'class'".into()));
    }
    let mut extra = Vec::new();
    while !parser.at_end() {
        let and = parser.word();
        if !and.eq_ignore_ascii_case("and") {
            return Err(fail(format!(
                "unexpected '{and}' after the map (only AND name = value may follow)"
            )));
        }
        let name = parser.word();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(fail("expected an option name after AND".into()));
        }
        parser.expect('=').map_err(fail)?;
        let value = parser.value().map_err(fail)?;
        extra.push((name.to_ascii_lowercase(), value));
    }
    Ok(TableOptions { map, extra })
}

/// Parses a replication map such as `{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}`.
pub fn parse_replication(input: &str) -> Result<CqlMap, CqlMapError> {
    let fail = |reason: String| CqlMapError {
        what: "replication",
        input: input.to_string(),
        reason,
        example: "\"{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}\"",
    };
    let mut parser = Parser::new(input);
    let map = parser.map().map_err(fail)?;
    if !parser.at_end() {
        return Err(fail("unexpected text after the closing '}'".into()));
    }
    if map.get("class").is_none() {
        return Err(fail("the map has no 'class'".into()));
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_compaction_maps_parse_and_round_trip() {
        let plain = parse_table_options(
            "compaction",
            "{'class': 'SizeTieredCompactionStrategy', 'min_threshold': '2'}",
        )
        .unwrap();
        assert_eq!(
            plain.to_string(),
            "{'class': 'SizeTieredCompactionStrategy', 'min_threshold': '2'}"
        );
        let with_option = parse_table_options(
            "compaction",
            "{'class': 'SizeTieredCompactionStrategy', 'min_threshold' : '2'} AND speculative_retry = 'NONE'",
        )
        .unwrap();
        assert_eq!(
            with_option.extra,
            vec![("speculative_retry".into(), CqlValue::Text("NONE".into()))]
        );
        assert!(with_option
            .to_string()
            .ends_with("AND speculative_retry = 'NONE'"));
    }

    #[test]
    fn malformed_maps_are_rejected_with_a_reason() {
        for bad in [
            "{'class': 'STCS'",
            "{class: 'STCS'}",
            "{'min_threshold': '2'}",
            "{'class': 'STCS'} DROP TABLE x",
            "{'class': 'STCS',}",
            "",
            "{'class': STCS}",
        ] {
            let error = parse_table_options("compaction", bad).unwrap_err();
            assert!(!error.to_string().contains('\n'), "{error}");
        }
    }

    #[test]
    fn replication_needs_a_class() {
        let map =
            parse_replication("{'class': 'SimpleStrategy', 'replication_factor': 3}").unwrap();
        assert_eq!(
            map.get("replication_factor"),
            Some(&CqlValue::Number("3".into()))
        );
        assert!(parse_replication("{'replication_factor': 3}").is_err());
    }
}
