//! Image references as container runtimes read them: `cqlbench/cassandra:5.0.9-jdk17` is
//! `docker.io/cqlbench/cassandra:5.0.9-jdk17` to containerd (and so to a kubelet), `busybox` is
//! `docker.io/library/busybox:latest`.

use crate::ImageError;

/// A checked image reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageName {
    /// As given, with the tag made explicit (`cqlbench/cassandra:5.0.9-jdk17`): what docker and podman
    /// show.
    pub short: String,
    /// With the registry made explicit (`docker.io/cqlbench/cassandra:5.0.9-jdk17`): what containerd
    /// stores and a kubelet looks up.
    pub full: String,
    pub tag: String,
}

impl ImageName {
    pub fn parse(text: &str) -> Result<ImageName, ImageError> {
        let bad = |why: &str| ImageError::BadName(format!("{text:?}: {why}"));
        if text.is_empty() || text.contains('@') {
            return Err(bad(
                "expected NAME[:TAG], e.g. cqlbench/cassandra:5.0.9-jdk17",
            ));
        }
        // A tag is after the last ':' that follows the last '/' (a registry's port comes before it).
        let last_slash = text.rfind('/').map_or(0, |i| i + 1);
        let (repository, tag) = match text[last_slash..].rfind(':') {
            Some(at) => (&text[..last_slash + at], &text[last_slash + at + 1..]),
            None => (text, "latest"),
        };
        let tag_ok = !tag.is_empty()
            && tag.len() <= 128
            && !tag.starts_with(['.', '-'])
            && tag
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !tag_ok {
            return Err(bad("a tag is letters, digits, '_', '.' and '-'"));
        }
        let mut components: Vec<&str> = repository.split('/').collect();
        let registry = match components.first() {
            Some(first)
                if components.len() > 1
                    && (first.contains(['.', ':']) || *first == "localhost") =>
            {
                Some(components.remove(0))
            }
            _ => None,
        };
        let path_ok = components.iter().all(|c| {
            !c.is_empty()
                && c.chars().all(|ch| {
                    ch.is_ascii_lowercase() || ch.is_ascii_digit() || matches!(ch, '.' | '_' | '-')
                })
                && c.starts_with(|ch: char| ch.is_ascii_alphanumeric())
        });
        if !path_ok {
            return Err(bad(
                "a repository is lower-case letters, digits, '.', '_' and '-' between '/'",
            ));
        }
        let path = components.join("/");
        let full = match registry {
            Some(registry) => format!("{registry}/{path}:{tag}"),
            None if components.len() == 1 => format!("docker.io/library/{path}:{tag}"),
            None => format!("docker.io/{path}:{tag}"),
        };
        Ok(ImageName {
            short: format!("{repository}:{tag}"),
            full,
            tag: tag.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_explicit_as_runtimes_read_them() {
        let name = ImageName::parse("cqlbench/cassandra:5.0.9-jdk17").unwrap();
        assert_eq!(name.full, "docker.io/cqlbench/cassandra:5.0.9-jdk17");
        assert_eq!(name.short, "cqlbench/cassandra:5.0.9-jdk17");
        assert_eq!(name.tag, "5.0.9-jdk17");
        assert_eq!(
            ImageName::parse("busybox").unwrap().full,
            "docker.io/library/busybox:latest"
        );
        let private = ImageName::parse("registry.example:5000/team/cqlbench:0.1.0").unwrap();
        assert_eq!(private.full, "registry.example:5000/team/cqlbench:0.1.0");
        assert_eq!(
            ImageName::parse("localhost/x").unwrap().full,
            "localhost/x:latest"
        );
    }

    #[test]
    fn bad_names_are_refused() {
        for bad in [
            "",
            "Cqlbench/x",
            "x:",
            "x:-1",
            "a//b",
            "x@sha256:00",
            "x:a b",
        ] {
            assert!(ImageName::parse(bad).is_err(), "{bad:?}");
        }
    }
}
