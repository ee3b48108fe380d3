//! A YAML document as a tree whose every node knows its line, so that a front end can say
//! `FILE:LINE: what is wrong` about a key or a value, not only about a syntax error.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle};

/// One node of a YAML document.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// 1-based line where the node starts.
    pub line: usize,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A scalar as written; `plain` when it had no quotes (so `null`, `~` and an empty value mean
    /// nothing, while `"null"` is text).
    Scalar {
        text: String,
        plain: bool,
    },
    Seq(Vec<Node>),
    /// Entries in the order written (a key given twice is refused when the tree is built).
    Map(Vec<(Key, Node)>),
}

/// A mapping key with its line.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    pub line: usize,
    pub text: String,
}

/// A syntax error, or a document shape this reader does not take.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    pub line: usize,
    pub message: String,
}

impl Node {
    /// The scalar's text, or `None` for a sequence or a mapping.
    pub fn scalar(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// Whether the node is YAML's null (`~`, `null`, or nothing at all).
    pub fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar { text, plain: true }
            if text.is_empty() || text == "~" || text.eq_ignore_ascii_case("null"))
    }

    /// What kind of node this is, for messages.
    pub fn kind(&self) -> &'static str {
        match &self.value {
            Value::Scalar { .. } if self.is_null() => "nothing",
            Value::Scalar { .. } => "a single value",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

/// Parses the first document of `text` (an empty text is an empty mapping).
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut builder = Builder {
        events: Parser::new_from_str(text),
        anchors: HashMap::new(),
    };
    loop {
        match builder.next()? {
            None | Some((Event::StreamEnd, _)) => {
                return Ok(Node {
                    line: 1,
                    value: Value::Map(Vec::new()),
                })
            }
            Some((Event::StreamStart | Event::DocumentStart(_), _)) => continue,
            Some((event, line)) => return builder.node(event, line),
        }
    }
}

struct Builder<'a> {
    events: Parser<'a, saphyr_parser::StrInput<'a>>,
    anchors: HashMap<usize, Node>,
}

impl<'a> Builder<'a> {
    fn next(&mut self) -> Result<Option<(Event<'a>, usize)>, SyntaxError> {
        match self.events.next_event() {
            None => Ok(None),
            Some(Ok((event, span))) => Ok(Some((event, span.start.line()))),
            Some(Err(e)) => Err(SyntaxError {
                line: e.marker().line(),
                message: e.info().to_string(),
            }),
        }
    }

    fn expect_next(&mut self) -> Result<(Event<'a>, usize), SyntaxError> {
        self.next()?.ok_or_else(|| SyntaxError {
            line: 0,
            message: "the document ends in the middle of a value".into(),
        })
    }

    fn node(&mut self, event: Event<'a>, line: usize) -> Result<Node, SyntaxError> {
        let (node, anchor) = match event {
            Event::Scalar(text, style, anchor, _) => (
                Node {
                    line,
                    value: Value::Scalar {
                        text: text.into_owned(),
                        plain: style == ScalarStyle::Plain,
                    },
                },
                anchor,
            ),
            Event::SequenceStart(anchor, _) => (self.sequence(line)?, anchor),
            Event::MappingStart(anchor, _) => (self.mapping(line)?, anchor),
            Event::Alias(anchor) => {
                let target = self.anchors.get(&anchor).ok_or_else(|| SyntaxError {
                    line,
                    message: "an alias names an anchor that is not defined before it".into(),
                })?;
                return Ok(target.clone());
            }
            other => {
                return Err(SyntaxError {
                    line,
                    message: format!("unexpected {other:?}"),
                })
            }
        };
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        Ok(node)
    }

    fn sequence(&mut self, line: usize) -> Result<Node, SyntaxError> {
        let mut items = Vec::new();
        loop {
            match self.expect_next()? {
                (Event::SequenceEnd, _) => break,
                (event, at) => items.push(self.node(event, at)?),
            }
        }
        Ok(Node {
            line,
            value: Value::Seq(items),
        })
    }

    fn mapping(&mut self, line: usize) -> Result<Node, SyntaxError> {
        let mut entries: Vec<(Key, Node)> = Vec::new();
        loop {
            let (event, at) = self.expect_next()?;
            if matches!(event, Event::MappingEnd) {
                break;
            }
            let key = self.node(event, at)?;
            let Some(text) = key.scalar() else {
                return Err(SyntaxError {
                    line: at,
                    message: "a mapping key must be a single value".into(),
                });
            };
            let key = Key {
                line: at,
                text: text.to_string(),
            };
            if let Some((first, _)) = entries.iter().find(|(k, _)| k.text == key.text) {
                return Err(SyntaxError {
                    line: at,
                    message: format!(
                        "'{}' is given twice (first at line {})",
                        key.text, first.line
                    ),
                });
            }
            let (event, at) = self.expect_next()?;
            let value = self.node(event, at)?;
            entries.push((key, value));
        }
        Ok(Node {
            line,
            value: Value::Map(entries),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_knows_its_line() {
        let doc = parse("a: 1\nb:\n  - x\n  - \"null\"\nc: ~\n").unwrap();
        let Value::Map(entries) = &doc.value else {
            panic!("{doc:?}")
        };
        assert_eq!(entries[0].0.text, "a");
        assert_eq!((entries[0].1.line, entries[0].1.scalar()), (1, Some("1")));
        let Value::Seq(items) = &entries[1].1.value else {
            panic!()
        };
        assert_eq!(items[1].line, 4);
        assert!(!items[1].is_null(), "a quoted null is text");
        assert!(entries[2].1.is_null());
        assert_eq!(entries[2].0.line, 5);
    }

    #[test]
    fn a_key_given_twice_and_a_syntax_error_name_their_line() {
        let twice = parse("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!(twice.line, 3);
        assert!(twice.message.contains("line 1"), "{}", twice.message);
        let bad = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(bad.line >= 1, "{bad:?}");
    }

    #[test]
    fn aliases_repeat_their_anchor() {
        let doc = parse("base: &b {x: 1}\ncopy: *b\n").unwrap();
        let Value::Map(entries) = &doc.value else {
            panic!()
        };
        assert_eq!(entries[0].1.value, entries[1].1.value);
    }
}
