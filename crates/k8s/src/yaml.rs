//! A small YAML writer for `serde_json::Value`s: block style, two-space indent, keys in the value's order
//! (sorted, as serde_json's maps are), strings quoted JSON-style unless they are plainly safe. The output
//! of a value is always the same text, so rendered files can be compared byte for byte.

use serde_json::Value;

/// The YAML document for `value` (ending in a newline).
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => emit_map(&mut out, map, 0),
        Value::Array(list) if !list.is_empty() => emit_list(&mut out, list, 0),
        scalar => {
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
    out
}

fn is_block(value: &Value) -> bool {
    match value {
        Value::Object(map) => !map.is_empty(),
        Value::Array(list) => !list.is_empty(),
        _ => false,
    }
}

fn emit_map(out: &mut String, map: &serde_json::Map<String, Value>, indent: usize) {
    for (key, value) in map {
        out.push_str(&" ".repeat(indent));
        out.push_str(&string_text(key));
        out.push(':');
        match value {
            Value::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                emit_map(out, inner, indent + 2);
            }
            Value::Array(inner) if !inner.is_empty() => {
                out.push('\n');
                emit_list(out, inner, indent);
            }
            scalar => {
                out.push(' ');
                out.push_str(&scalar_text(scalar));
                out.push('\n');
            }
        }
    }
}

fn emit_list(out: &mut String, list: &[Value], indent: usize) {
    for item in list {
        if is_block(item) {
            // The item's block at indent + 2, its first line's indent replaced by "- ".
            let mut block = String::new();
            match item {
                Value::Object(map) => emit_map(&mut block, map, indent + 2),
                Value::Array(inner) => emit_list(&mut block, inner, indent + 2),
                _ => unreachable!("is_block holds for maps and lists only"),
            }
            out.push_str(&" ".repeat(indent));
            out.push_str("- ");
            out.push_str(&block[indent + 2..]);
        } else {
            out.push_str(&" ".repeat(indent));
            out.push_str("- ");
            out.push_str(&scalar_text(item));
            out.push('\n');
        }
    }
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string_text(s),
        Value::Object(_) => "{}".to_string(),
        Value::Array(_) => "[]".to_string(),
    }
}

/// Plain when nothing in it could be read as anything but this string, else a JSON string (which is a
/// valid YAML double-quoted scalar).
fn string_text(s: &str) -> String {
    let reserved = [
        "y", "n", "yes", "no", "true", "false", "on", "off", "null", "~",
    ];
    let plain = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '/' || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && !reserved.contains(&s.to_ascii_lowercase().as_str());
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn block_style_with_quoted_ambiguities() {
        let value = json!({
            "kind": "Job",
            "spec": {
                "completions": 3,
                "list": ["a", "$(X)", "-d", "30s", "0.35", "yes", ""],
                "containers": [{"name": "c", "args": ["run"]}, {"env": [], "x": {}}],
                "nested": [[1, 2], {"k": true}],
            },
        });
        let expected = "\
kind: Job
spec:
  completions: 3
  containers:
  - args:
    - run
    name: c
  - env: []
    x: {}
  list:
  - a
  - \"$(X)\"
  - \"-d\"
  - \"30s\"
  - \"0.35\"
  - \"yes\"
  - \"\"
  nested:
  - - 1
    - 2
  - k: true
";
        assert_eq!(to_yaml(&value), expected);
    }
}
