//! nosqlbench's template parameters, expanded in the file's text before it is read as YAML (as
//! nosqlbench does, line by line, YAML comment lines left alone): `TEMPLATE(name,default)`,
//! `TEMPLATE(name:default)`, `${name:default}` and `<<name:default>>`, a default that is itself a
//! template included. A template without a default takes the default an earlier one gave the same
//! name, else `UNSET:name`.

/// A template whose text cannot be expanded: unbalanced parentheses or a missing `>>`.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateError {
    pub line: usize,
    pub message: String,
}

/// The text with every template replaced by its parameter's value (or its default); `used`
/// receives the name of every parameter a template asked for.
pub fn expand(
    text: &str,
    params: &[(String, String)],
    used: &mut Vec<String>,
) -> Result<String, TemplateError> {
    let mut state = State {
        params,
        used,
        defaults: Vec::new(),
    };
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_start().starts_with('#') {
            out.push_str(line);
        } else {
            out.push_str(&state.line(line, i + 1)?);
        }
    }
    Ok(out)
}

struct State<'a> {
    params: &'a [(String, String)],
    used: &'a mut Vec<String>,
    /// The first default each name was given, for later templates of the name without one.
    defaults: Vec<(String, String)>,
}

impl State<'_> {
    fn line(&mut self, text: &str, line: usize) -> Result<String, TemplateError> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = next_template(rest) {
            out.push_str(&rest[..at]);
            let (expanded, consumed) = self.one(&rest[at..], line)?;
            out.push_str(&expanded);
            rest = &rest[at + consumed..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// Where the next template starts.
fn next_template(text: &str) -> Option<usize> {
    ["TEMPLATE(", "${", "<<"]
        .iter()
        .filter_map(|start| text.find(start))
        .min()
}

impl State<'_> {
    /// The template at the start of `text`: its value and the bytes it spans.
    fn one(&mut self, text: &str, line: usize) -> Result<(String, usize), TemplateError> {
        let err = |message: String| TemplateError { line, message };
        let (inner, consumed) = if let Some(body) = text.strip_prefix("TEMPLATE(") {
            let close = matching(body, '(', ')')
                .ok_or_else(|| err("TEMPLATE( has no closing parenthesis".into()))?;
            (&body[..close], "TEMPLATE(".len() + close + 1)
        } else if let Some(body) = text.strip_prefix("${") {
            let close =
                matching(body, '{', '}').ok_or_else(|| err("${ has no closing }".into()))?;
            (&body[..close], 2 + close + 1)
        } else {
            let body = &text[2..];
            let close = body
                .find(">>")
                .ok_or_else(|| err("<< has no closing >>".into()))?;
            (&body[..close], 2 + close + 2)
        };
        let (name, default) = split_name(inner);
        let name = name.trim();
        if name.is_empty() {
            return Err(err(format!("a template has no parameter name: '{inner}'")));
        }
        if !self.used.iter().any(|u| u == name) {
            self.used.push(name.to_string());
        }
        let default = match default {
            Some(default) => Some(self.line(default, line)?),
            None => None,
        };
        if let Some(given) = &default {
            if !self.defaults.iter().any(|(n, _)| n == name) {
                self.defaults.push((name.to_string(), given.clone()));
            }
        }
        if let Some((_, value)) = self.params.iter().rev().find(|(n, _)| n == name) {
            return Ok((value.clone(), consumed));
        }
        let earlier = || {
            self.defaults
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, d)| d.clone())
        };
        let value = default
            .or_else(earlier)
            .unwrap_or_else(|| format!("UNSET:{name}"));
        Ok((value, consumed))
    }
}

/// `name,default` or `name:default` (the first separator outside parentheses); no default
/// when neither is there.
fn split_name(inner: &str) -> (&str, Option<&str>) {
    let mut depth = 0i32;
    for (i, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | ':' if depth == 0 => return (&inner[..i], Some(&inner[i + 1..])),
            _ => {}
        }
    }
    (inner, None)
}

/// The index of the `close` that closes an `open` just before `body`.
fn matching(body: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in body.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            if depth == 0 {
                return Some(i);
            }
            depth -= 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::expand;

    fn run(text: &str, params: &[(&str, &str)]) -> (String, Vec<String>) {
        let params: Vec<(String, String)> = params
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let mut used = Vec::new();
        let out = expand(text, &params, &mut used).expect("expands");
        (out, used)
    }

    #[test]
    fn every_spelling_takes_the_parameter_or_its_default() {
        let (out, used) = run(
            "a: TEMPLATE(rf,1) b: TEMPLATE(ks:baselines) c: <<partsize:5000>>",
            &[("rf", "3")],
        );
        assert_eq!(out, "a: 3 b: baselines c: 5000");
        assert_eq!(used, ["rf", "ks", "partsize"]);
    }

    #[test]
    fn a_default_may_itself_be_a_template() {
        let text = "cycles: TEMPLATE(main-cycles,TEMPLATE(cycles,10M))";
        assert_eq!(run(text, &[]).0, "cycles: 10M");
        assert_eq!(run(text, &[("cycles", "5")]).0, "cycles: 5");
        assert_eq!(run(text, &[("main-cycles", "7")]).0, "cycles: 7");
    }

    #[test]
    fn a_default_keeps_its_own_parentheses_and_commas() {
        let (out, _) = run("b: TEMPLATE(f,Mod(5)) c: TEMPLATE(g,a,b)", &[]);
        assert_eq!(out, "b: Mod(5) c: a,b");
    }

    #[test]
    fn without_a_default_an_earlier_default_or_unset_is_taken() {
        let (out, _) = run(
            "a: TEMPLATE(ks,base)\nb: TEMPLATE(ks)\nc: ${other}\n# TEMPLATE(x\n",
            &[],
        );
        assert_eq!(out, "a: base\nb: base\nc: UNSET:other\n# TEMPLATE(x\n");
        assert_eq!(run("z: 9TEMPLATE(addzeroes,)", &[]).0, "z: 9");
    }

    #[test]
    fn an_unclosed_template_is_refused_with_its_line() {
        let mut used = Vec::new();
        let err = expand("a: 1\nb: TEMPLATE(x,2\n", &[], &mut used).unwrap_err();
        assert_eq!(err.line, 2);
        let err = expand("a: <<x:1\n", &[], &mut used).unwrap_err();
        assert!(err.message.contains(">>"), "{}", err.message);
    }
}
