//! Debian packages unpacked into cqlbench's cache, never installed: a private apt configuration
//! (its own sources, lists and cache; the machine's sources stay untouched) naming the Debian mirror
//! the machine already uses, `apt-get download`, and `dpkg-deb -x`. Used for the JDK 8 of the local
//! clusters and for the machine probe's sysbench and fio.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Debian's archive key, as every Debian machine has it.
const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";

#[derive(Debug, thiserror::Error)]
pub enum DebianError {
    #[error("/etc/os-release names no VERSION_CODENAME: this does not look like Debian")]
    NotDebian,
    #[error("no Debian archive for {0} in the machine's apt sources (/etc/apt/sources.list, /etc/apt/sources.list.d/)")]
    NoMirror(String),
    #[error("{0} is not installed (Debian's packages are fetched with apt-get and unpacked with dpkg-deb)")]
    Missing(String),
    #[error("{program}: {line}")]
    Failed { program: String, line: String },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, DebianError>;

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> DebianError {
    let what = what.into();
    move |source| DebianError::Io { what, source }
}

/// The Debian mirror and release codename the machine's own apt sources use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mirror {
    pub uri: String,
    pub codename: String,
}

/// The machine's mirror, from `/etc/os-release` and its apt sources (one-line or deb822 style).
pub fn machine_mirror() -> Result<Mirror> {
    let os_release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let codename = os_release
        .lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME="))
        .map(|c| c.trim().trim_matches('"').to_string())
        .filter(|c| !c.is_empty())
        .ok_or(DebianError::NotDebian)?;
    let mut texts = Vec::new();
    if let Ok(text) = std::fs::read_to_string("/etc/apt/sources.list") {
        texts.push((false, text));
    }
    for part in files_in(Path::new("/etc/apt/sources.list.d")).unwrap_or_default() {
        let name = part.to_string_lossy().to_string();
        let deb822 = name.ends_with(".sources");
        if deb822 || name.ends_with(".list") {
            if let Ok(text) = std::fs::read_to_string(&part) {
                texts.push((deb822, text));
            }
        }
    }
    texts
        .iter()
        .find_map(|(deb822, text)| {
            if *deb822 {
                mirror_in_deb822(text, &codename)
            } else {
                mirror_in_one_line(text, &codename)
            }
        })
        .map(|uri| Mirror {
            uri,
            codename: codename.clone(),
        })
        .ok_or(DebianError::NoMirror(codename))
}

/// The URI of the first `deb` stanza of a deb822 `.sources` file that serves `codename` itself.
pub fn mirror_in_deb822(text: &str, codename: &str) -> Option<String> {
    for stanza in text.split("\n\n") {
        let field = |name: &str| {
            stanza.lines().find_map(|l| {
                let (key, value) = l.split_once(':')?;
                (key.trim().eq_ignore_ascii_case(name)).then(|| value.trim().to_string())
            })
        };
        let types = field("Types").unwrap_or_default();
        let suites = field("Suites").unwrap_or_default();
        let enabled = field("Enabled").is_none_or(|e| e != "no");
        if enabled
            && types.split_whitespace().any(|t| t == "deb")
            && suites.split_whitespace().any(|s| s == codename)
        {
            if let Some(uri) =
                field("URIs").and_then(|u| u.split_whitespace().next().map(str::to_string))
            {
                return Some(uri);
            }
        }
    }
    None
}

/// The URI of the first `deb URI codename …` line of a one-line-style sources file.
pub fn mirror_in_one_line(text: &str, codename: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let line = line.split('#').next()?.trim();
        let rest = line.strip_prefix("deb ")?.trim_start();
        // Skip an options block: deb [signed-by=…] URI suite …
        let rest = match rest.strip_prefix('[') {
            Some(after) => after.split_once(']')?.1.trim_start(),
            None => rest,
        };
        let mut words = rest.split_whitespace();
        let (uri, suite) = (words.next()?, words.next()?);
        (suite == codename).then(|| uri.to_string())
    })
}

/// A private apt configuration: its own sources, lists, cache and (empty) dpkg status.
pub struct Apt {
    options: Vec<String>,
}

impl Apt {
    /// Sources: the mirror's `suites` (main), kept under `dir`.
    pub fn new(dir: &Path, mirror: &Mirror, suites: &[&str]) -> Result<Self> {
        let lists = dir.join("lists");
        let cache = dir.join("cache");
        for d in [
            lists.join("partial"),
            cache.join("archives").join("partial"),
        ] {
            std::fs::create_dir_all(&d).map_err(io(format!("creating {}", d.display())))?;
        }
        let sources = dir.join("sources.list");
        let text: String = suites
            .iter()
            .map(|suite| format!("deb [signed-by={KEYRING}] {} {suite} main\n", mirror.uri))
            .collect();
        std::fs::write(&sources, text).map_err(io(format!("writing {}", sources.display())))?;
        let status = dir.join("status");
        std::fs::write(&status, "").map_err(io(format!("writing {}", status.display())))?;
        let options = [
            format!("Dir::Etc::sourcelist={}", sources.display()),
            "Dir::Etc::sourceparts=-".to_string(),
            format!("Dir::State::Lists={}", lists.display()),
            format!("Dir::State::status={}", status.display()),
            format!("Dir::Cache={}", cache.display()),
            "APT::Get::List-Cleanup=0".to_string(),
            // Downloads land in a directory of ours, which apt's unprivileged user may not enter.
            "APT::Sandbox::User=root".to_string(),
        ]
        .into_iter()
        .flat_map(|o| ["-o".to_string(), o])
        .collect();
        Ok(Self { options })
    }

    pub fn update(&self) -> Result<()> {
        run(Command::new("apt-get")
            .arg("-q")
            .args(&self.options)
            .arg("update"))
        .map(drop)
    }

    pub fn download(&self, packages: &[String], into: &Path) -> Result<()> {
        run(Command::new("apt-get")
            .arg("-q")
            .args(&self.options)
            .arg("download")
            .args(packages)
            .current_dir(into))
        .map(drop)
    }

    /// `packages` and every package they depend on (pre-depends too), all the way down: what a root
    /// filesystem of their own needs. Virtual packages are left out (a real one provides them).
    pub fn closure(&self, packages: &[&str]) -> Result<Vec<String>> {
        let tree = self.depends_tree(packages)?;
        let mut wanted: Vec<String> = packages.iter().map(|p| p.to_string()).collect();
        for name in tree.lines().filter(|l| !l.starts_with([' ', '<'])) {
            let name = name.trim();
            if !wanted.iter().any(|w| w == name) {
                wanted.push(name.to_string());
            }
        }
        Ok(wanted)
    }

    fn depends_tree(&self, packages: &[&str]) -> Result<String> {
        run(Command::new("apt-cache")
            .args(&self.options)
            .args([
                "depends",
                "--recurse",
                "--no-recommends",
                "--no-suggests",
                "--no-conflicts",
                "--no-breaks",
                "--no-replaces",
                "--no-enhances",
            ])
            .args(packages))
    }

    /// `packages` and the shared-library packages they need, all the way down, less those the
    /// machine has installed (its own dpkg status): what must be unpacked beside them to run.
    pub fn with_missing_libraries(&self, packages: &[&str]) -> Result<Vec<String>> {
        let tree = self.depends_tree(packages)?;
        let installed = installed_packages();
        let mut wanted: Vec<String> = packages.iter().map(|p| p.to_string()).collect();
        for name in tree.lines().filter(|l| !l.starts_with([' ', '<'])) {
            let name = name.trim();
            if is_shared_library(name)
                && !installed.iter().any(|i| i == name)
                && !wanted.iter().any(|w| w == name)
            {
                wanted.push(name.to_string());
            }
        }
        Ok(wanted)
    }
}

/// Debian names shared-library packages `lib…` (perl modules and development files aside).
fn is_shared_library(package: &str) -> bool {
    package.starts_with("lib") && !package.ends_with("-perl") && !package.ends_with("-dev")
}

/// The machine's installed packages (`/var/lib/dpkg/status`), architecture suffixes dropped.
fn installed_packages() -> Vec<String> {
    let status = std::fs::read_to_string("/var/lib/dpkg/status").unwrap_or_default();
    status
        .split("\n\n")
        .filter(|stanza| {
            stanza
                .lines()
                .any(|l| l.starts_with("Status:") && l.ends_with(" installed"))
        })
        .filter_map(|stanza| stanza.lines().find_map(|l| l.strip_prefix("Package: ")))
        .map(|p| p.trim().to_string())
        .collect()
}

/// Unpacks every `.deb` in `debs` into `root`.
pub fn unpack_all(debs: &Path, root: &Path) -> Result<()> {
    for deb in files_in(debs)? {
        if deb.extension().is_some_and(|e| e == "deb") {
            run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(root))?;
        }
    }
    Ok(())
}

/// Runs a command to completion and returns its standard output; a failure carries its last
/// meaningful line of output.
pub fn run(command: &mut Command) -> Result<String> {
    let program = command.get_program().to_string_lossy().to_string();
    let output = command.stdin(Stdio::null()).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            DebianError::Missing(program.clone())
        } else {
            DebianError::Failed {
                program: program.clone(),
                line: e.to_string(),
            }
        }
    })?;
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    if output.status.success() {
        return Ok(stdout);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    Err(DebianError::Failed {
        program,
        line: failure_line(&stderr, &stdout, |l| l.starts_with("E:")),
    })
}

/// The one line that says why a tool failed: the last line it marks as its error (`marked`, looked
/// for in standard error, then standard output), else the last line it printed to standard error,
/// else to standard output. Shared by every crate that runs another program and reports its failure.
pub fn failure_line(stderr: &str, stdout: &str, marked: impl Fn(&str) -> bool) -> String {
    let last = |text: &str, wanted: &dyn Fn(&str) -> bool| {
        text.lines().rev().find(|l| wanted(l)).map(str::to_owned)
    };
    let printed = |l: &str| !l.trim().is_empty();
    last(stderr, &marked)
        .or_else(|| last(stdout, &marked))
        .or_else(|| last(stderr, &printed))
        .or_else(|| last(stdout, &printed))
        .map_or_else(
            || "failed without a message".to_owned(),
            |l| l.trim().to_owned(),
        )
}

/// The files (not directories) in `dir`, sorted.
pub fn files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(format!("reading {}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_from_deb822_sources() {
        let text = "Types: deb\nURIs: http://mirror.invalid/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\nTypes: deb\nURIs: http://mirror.invalid/debian-security\nSuites: bookworm-security\n";
        assert_eq!(
            mirror_in_deb822(text, "bookworm").as_deref(),
            Some("http://mirror.invalid/debian")
        );
        assert_eq!(mirror_in_deb822(text, "trixie"), None);
        let disabled = "Types: deb\nEnabled: no\nURIs: http://a.invalid/debian\nSuites: bookworm\n";
        assert_eq!(mirror_in_deb822(disabled, "bookworm"), None);
        let source_only = "Types: deb-src\nURIs: http://a.invalid/debian\nSuites: bookworm\n";
        assert_eq!(mirror_in_deb822(source_only, "bookworm"), None);
    }

    #[test]
    fn mirror_from_one_line_sources() {
        let text = "# deb http://old.invalid/debian bookworm main\ndeb-src http://src.invalid/debian bookworm main\ndeb [signed-by=/k.gpg arch=amd64] http://m.invalid/debian bookworm main contrib\n";
        assert_eq!(
            mirror_in_one_line(text, "bookworm").as_deref(),
            Some("http://m.invalid/debian")
        );
        assert_eq!(
            mirror_in_one_line("deb http://x.invalid/d bookworm-updates main\n", "bookworm"),
            None
        );
    }

    #[test]
    fn only_shared_library_packages_are_taken_along() {
        assert!(is_shared_library("libaio1"));
        assert!(is_shared_library("libluajit-5.1-2"));
        assert!(!is_shared_library("libfile-find-rule-perl"));
        assert!(!is_shared_library("libc-dev"));
        assert!(!is_shared_library("mailcap"));
    }
}

#[cfg(test)]
mod failure_line_tests {
    use super::failure_line;

    #[test]
    fn the_marked_line_first_then_the_last_printed_one() {
        let marked = |l: &str| l.starts_with("E:");
        assert_eq!(
            failure_line("W: a warning\nE: the cause\nW: after\n", "", marked),
            "E: the cause"
        );
        assert_eq!(
            failure_line("", "out\nE: in stdout\n", marked),
            "E: in stdout"
        );
        assert_eq!(
            failure_line("first\n  last  \n\n", "stdout\n", marked),
            "last"
        );
        assert_eq!(failure_line("\n", "only stdout\n", marked), "only stdout");
        assert_eq!(failure_line("", "", marked), "failed without a message");
    }
}
