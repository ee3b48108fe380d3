//! Garbage collector flag sets, exactly as the benchmarks in the seeds ran them, checked against the JDK.

use serde::{Deserialize, Serialize};

use crate::error::{ClusterError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gc {
    G1,
    Zgc,
    ZgcGenerational,
    Shenandoah,
    /// `-XX:ShenandoahGCMode=generational`, a product feature from JDK 25 on (JEP 521).
    ShenandoahGenerational,
    Cms,
    Parallel,
}

impl Gc {
    pub const ALL: [Gc; 7] = [
        Gc::G1,
        Gc::Zgc,
        Gc::ZgcGenerational,
        Gc::Shenandoah,
        Gc::ShenandoahGenerational,
        Gc::Cms,
        Gc::Parallel,
    ];

    /// "g1, zgc, …": every name `--gc` accepts, for messages.
    pub fn names() -> String {
        Self::ALL.map(Gc::name).join(", ")
    }

    pub fn name(self) -> &'static str {
        match self {
            Gc::G1 => "g1",
            Gc::Zgc => "zgc",
            Gc::ZgcGenerational => "zgc-generational",
            Gc::Shenandoah => "shenandoah",
            Gc::ShenandoahGenerational => "shenandoah-generational",
            Gc::Cms => "cms",
            Gc::Parallel => "parallel",
        }
    }

    pub fn parse(input: &str) -> Result<Self> {
        let wanted = input.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|gc| gc.name() == wanted)
            .ok_or_else(|| {
                ClusterError::InvalidSpec(format!(
                    "--gc {input:?}: expected one of {}",
                    Gc::names()
                ))
            })
    }

    /// The collector's name as the JVM's GC log states it at start-up (`[gc] Using G1`, `Using The Z
    /// Garbage Collector`, …): what proves which collector a remote JVM really runs.
    pub fn jvm_log_name(self) -> &'static str {
        match self {
            Gc::G1 => "G1",
            Gc::Zgc | Gc::ZgcGenerational => "The Z Garbage Collector",
            Gc::Shenandoah | Gc::ShenandoahGenerational => "Shenandoah",
            Gc::Cms => "Concurrent Mark Sweep",
            Gc::Parallel => "Parallel",
        }
    }

    /// The `-XX:+Use…` flag the live JVM reports when this collector runs.
    pub fn use_flag(self) -> &'static str {
        match self {
            Gc::G1 => "-XX:+UseG1GC",
            Gc::Zgc | Gc::ZgcGenerational => "-XX:+UseZGC",
            Gc::Shenandoah | Gc::ShenandoahGenerational => "-XX:+UseShenandoahGC",
            Gc::Cms => "-XX:+UseConcMarkSweepGC",
            Gc::Parallel => "-XX:+UseParallelGC",
        }
    }
}

impl std::fmt::Display for Gc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Extra tuning on top of a collector's base flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum GcProfile {
    #[default]
    Default,
    /// Seed 004 (Outbrain): class unloading every 100 Shenandoah cycles, smaller on-heap memtables and key cache.
    ShenandoahTuned,
}

impl GcProfile {
    pub fn parse(input: &str) -> Result<Self> {
        match input.trim().to_ascii_lowercase().as_str() {
            "default" | "" => Ok(Self::Default),
            "shenandoah-tuned" => Ok(Self::ShenandoahTuned),
            _ => Err(ClusterError::InvalidSpec(format!(
                "--gc-profile {input:?}: expected shenandoah-tuned"
            ))),
        }
    }
}

/// Everything that decides the JVM's memory management flags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcSettings {
    pub gc: Gc,
    pub heap_bytes: u64,
    /// ParallelGCThreads = ConcGCThreads = this (the seed's `--cores`); JVM ergonomics when `None`.
    pub threads: Option<u32>,
    pub profile: GcProfile,
}

pub const MIN_HEAP_BYTES: u64 = 256 * 1024 * 1024;

/// From this JDK on, ZGC has only its generational mode (JEP 490).
pub const ZGC_ONLY_GENERATIONAL_FROM: u32 = 24;

/// From this JDK on, generational Shenandoah is a product feature (JEP 521; experimental in 24).
pub const SHENANDOAH_GENERATIONAL_FROM: u32 = 25;

/// Renders the collector, thread and heap flags for `jdk_major`, or says why the combination cannot run.
pub fn render(settings: &GcSettings, jdk_major: u32) -> Result<Vec<String>> {
    check(settings, jdk_major)?;
    let threads = |flags: &mut Vec<String>, parallel_first: bool| {
        if let Some(n) = settings.threads {
            let parallel = format!("-XX:ParallelGCThreads={n}");
            let concurrent = format!("-XX:ConcGCThreads={n}");
            if parallel_first {
                flags.extend([parallel, concurrent]);
            } else {
                flags.extend([concurrent, parallel]);
            }
        }
    };
    let mut flags: Vec<String> = Vec::new();
    match settings.gc {
        Gc::G1 => {
            flags.extend(strings(&[
                "-XX:+UseG1GC",
                "-XX:G1RSetUpdatingPauseTimePercent=5",
                "-XX:MaxGCPauseMillis=300",
                "-XX:InitiatingHeapOccupancyPercent=70",
            ]));
            threads(&mut flags, true);
        }
        Gc::ZgcGenerational if jdk_major >= ZGC_ONLY_GENERATIONAL_FROM => {
            // JDK 24 removed the single-generation mode: plain -XX:+UseZGC is generational, and
            // -XX:+ZGenerational is obsolete (the JVM warns that it ignores it).
            flags.push("-XX:+UseZGC".to_string());
            threads(&mut flags, false);
            flags.extend(strings(&["-XX:+UseTransparentHugePages", "-verbose:gc"]));
        }
        Gc::Zgc | Gc::ZgcGenerational => {
            flags.extend(strings(&[
                "-XX:+UnlockExperimentalVMOptions",
                "-XX:+UseZGC",
            ]));
            if settings.gc == Gc::ZgcGenerational {
                flags.push("-XX:+ZGenerational".to_string());
            }
            threads(&mut flags, false);
            flags.extend(strings(&["-XX:+UseTransparentHugePages", "-verbose:gc"]));
        }
        Gc::Shenandoah => {
            flags.extend(strings(&[
                "-XX:+UnlockExperimentalVMOptions",
                "-XX:+UseShenandoahGC",
            ]));
            threads(&mut flags, false);
            flags.push("-XX:+UseTransparentHugePages".to_string());
            if settings.profile == GcProfile::ShenandoahTuned {
                flags.extend(strings(&[
                    "-XX:+ClassUnloadingWithConcurrentMark",
                    "-XX:ShenandoahUnloadClassesFrequency=100",
                ]));
            }
        }
        Gc::ShenandoahGenerational => {
            // A product mode on JDK 25: no UnlockExperimentalVMOptions; otherwise seed 000's Shenandoah set.
            flags.extend(strings(&[
                "-XX:+UseShenandoahGC",
                "-XX:ShenandoahGCMode=generational",
            ]));
            threads(&mut flags, false);
            flags.push("-XX:+UseTransparentHugePages".to_string());
        }
        Gc::Cms => {
            // -XX:+UseParNewGC is gone (and fatal) from JDK 9 on, where ParNew is implicit.
            if jdk_major < 9 {
                flags.push("-XX:+UseParNewGC".to_string());
            }
            flags.extend(strings(&[
                "-XX:+UseConcMarkSweepGC",
                "-XX:+CMSParallelRemarkEnabled",
                "-XX:SurvivorRatio=8",
                "-XX:MaxTenuringThreshold=1",
                "-XX:CMSInitiatingOccupancyFraction=75",
                "-XX:+UseCMSInitiatingOccupancyOnly",
                "-XX:CMSWaitDuration=10000",
                "-XX:+CMSParallelInitialMarkEnabled",
                "-XX:+CMSEdenChunksRecordAlways",
                "-XX:+CMSClassUnloadingEnabled",
            ]));
            threads(&mut flags, true);
        }
        Gc::Parallel => {
            flags.push("-XX:+UseParallelGC".to_string());
            threads(&mut flags, true);
        }
    }
    let heap = cqlbench_units::format_jvm_size(settings.heap_bytes);
    flags.push(format!("-Xms{heap}"));
    flags.push(format!("-Xmx{heap}"));
    if settings.gc == Gc::Cms {
        // The seed's CMS runs give the young generation half the heap (-Xmn8G of 16G).
        flags.push(format!(
            "-Xmn{}",
            cqlbench_units::format_jvm_size(settings.heap_bytes / 2)
        ));
    }
    Ok(flags)
}

fn strings(flags: &[&str]) -> Vec<String> {
    flags.iter().map(|f| f.to_string()).collect()
}

/// Refuses combinations the JVM would reject at start-up, before any process exists.
pub fn check(settings: &GcSettings, jdk_major: u32) -> Result<()> {
    let refuse = |why: String| Err(ClusterError::ImpossibleGc(why));
    if settings.heap_bytes < MIN_HEAP_BYTES {
        return refuse(format!(
            "--heap {}: Cassandra needs at least 256M of heap",
            cqlbench_units::format_jvm_size(settings.heap_bytes)
        ));
    }
    if settings.threads == Some(0) {
        return refuse("--gc-threads 0: need at least one GC thread".to_string());
    }
    match settings.gc {
        Gc::Cms if jdk_major >= 14 => {
            return refuse(format!(
                "--gc cms cannot run on JDK {jdk_major}: CMS was removed in JDK 14 (use --jdk 8 with Cassandra 3.11/4.0/4.1, --jdk 11 with 4.0/4.1, or --gc g1)"
            ))
        }
        Gc::ZgcGenerational if jdk_major < 21 => {
            return refuse(format!(
                "--gc zgc-generational cannot run on JDK {jdk_major}: generational ZGC arrived in JDK 21 (use --jdk 21, or --gc zgc)"
            ))
        }
        Gc::ShenandoahGenerational if jdk_major < SHENANDOAH_GENERATIONAL_FROM => {
            return refuse(format!(
                "--gc shenandoah-generational cannot run on JDK {jdk_major}: generational Shenandoah is a product feature from JDK 25 on (use --jdk 25, or --gc shenandoah)"
            ))
        }
        Gc::Zgc | Gc::Shenandoah if jdk_major < 11 => {
            return refuse(format!(
                "--gc {} cannot run on JDK {jdk_major}: upstream JDK 8 has neither Shenandoah nor ZGC (seed 000's \"Shenandoah jdk8\" ran a separate Shenandoah build of JDK 8, which no package registry ships); use --gc cms or --gc g1 on JDK 8, or JDK 11+ with Cassandra 4.0+",
                settings.gc
            ))
        }
        Gc::Zgc if jdk_major >= 24 => {
            return refuse(format!(
                "--gc zgc cannot run on JDK {jdk_major}: non-generational ZGC was removed in JDK 24 (use --gc zgc-generational)"
            ))
        }
        _ => {}
    }
    if settings.profile == GcProfile::ShenandoahTuned {
        if settings.gc != Gc::Shenandoah {
            return refuse(format!(
                "--gc-profile shenandoah-tuned tunes Shenandoah, but --gc is {}: add --gc shenandoah",
                settings.gc
            ));
        }
        if jdk_major >= 25 {
            return refuse(format!(
                "--gc-profile shenandoah-tuned cannot run on JDK {jdk_major}: it no longer has -XX:ShenandoahUnloadClassesFrequency"
            ));
        }
    }
    Ok(())
}

/// Collector selection belongs to `--gc`; a second `-XX:+Use…GC` in `--jvm-opt` would make the JVM refuse to start.
pub fn check_extra_opts(jvm_opts: &[String]) -> Result<()> {
    for opt in jvm_opts {
        let selects_gc = opt.starts_with("-XX:+Use")
            && opt.ends_with("GC")
            && !opt.contains("Adaptive")
            && opt != "-XX:+UseGCOverheadLimit";
        if selects_gc {
            return Err(ClusterError::InvalidSpec(format!(
                "--jvm-opt {opt}: choose the collector with --gc ({})",
                Gc::names()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 1024 * 1024 * 1024;

    fn settings(gc: Gc, heap_gb: u64, threads: Option<u32>) -> GcSettings {
        GcSettings {
            gc,
            heap_bytes: heap_gb * G,
            threads,
            profile: GcProfile::Default,
        }
    }

    #[test]
    fn g1_matches_seed_000() {
        let flags = render(&settings(Gc::G1, 31, Some(8)), 14).unwrap();
        assert_eq!(
            flags,
            [
                "-XX:+UseG1GC",
                "-XX:G1RSetUpdatingPauseTimePercent=5",
                "-XX:MaxGCPauseMillis=300",
                "-XX:InitiatingHeapOccupancyPercent=70",
                "-XX:ParallelGCThreads=8",
                "-XX:ConcGCThreads=8",
                "-Xms31G",
                "-Xmx31G"
            ]
        );
    }

    #[test]
    fn zgc_matches_seed_000() {
        let flags = render(&settings(Gc::Zgc, 31, Some(8)), 11).unwrap();
        assert_eq!(
            flags,
            [
                "-XX:+UnlockExperimentalVMOptions",
                "-XX:+UseZGC",
                "-XX:ConcGCThreads=8",
                "-XX:ParallelGCThreads=8",
                "-XX:+UseTransparentHugePages",
                "-verbose:gc",
                "-Xms31G",
                "-Xmx31G"
            ]
        );
    }

    #[test]
    fn shenandoah_matches_seed_000() {
        let flags = render(&settings(Gc::Shenandoah, 31, Some(8)), 11).unwrap();
        assert_eq!(
            flags,
            [
                "-XX:+UnlockExperimentalVMOptions",
                "-XX:+UseShenandoahGC",
                "-XX:ConcGCThreads=8",
                "-XX:ParallelGCThreads=8",
                "-XX:+UseTransparentHugePages",
                "-Xms31G",
                "-Xmx31G"
            ]
        );
    }

    #[test]
    fn cms_matches_seed_000_without_parnew_on_jdk11() {
        let flags = render(&settings(Gc::Cms, 16, Some(8)), 11).unwrap();
        assert_eq!(
            flags,
            [
                "-XX:+UseConcMarkSweepGC",
                "-XX:+CMSParallelRemarkEnabled",
                "-XX:SurvivorRatio=8",
                "-XX:MaxTenuringThreshold=1",
                "-XX:CMSInitiatingOccupancyFraction=75",
                "-XX:+UseCMSInitiatingOccupancyOnly",
                "-XX:CMSWaitDuration=10000",
                "-XX:+CMSParallelInitialMarkEnabled",
                "-XX:+CMSEdenChunksRecordAlways",
                "-XX:+CMSClassUnloadingEnabled",
                "-XX:ParallelGCThreads=8",
                "-XX:ConcGCThreads=8",
                "-Xms16G",
                "-Xmx16G",
                "-Xmn8G"
            ]
        );
        let jdk8 = render(&settings(Gc::Cms, 16, Some(8)), 8).unwrap();
        assert_eq!(jdk8[0], "-XX:+UseParNewGC");
    }

    #[test]
    fn shenandoah_tuned_adds_seed_004_flags() {
        let mut tuned = settings(Gc::Shenandoah, 1, None);
        tuned.profile = GcProfile::ShenandoahTuned;
        let flags = render(&tuned, 17).unwrap();
        assert!(flags.contains(&"-XX:+ClassUnloadingWithConcurrentMark".to_string()));
        assert!(flags.contains(&"-XX:ShenandoahUnloadClassesFrequency=100".to_string()));
        assert!(!flags.iter().any(|f| f.contains("GCThreads")));
    }

    #[test]
    fn generational_zgc_and_small_heaps() {
        let flags = render(&settings(Gc::ZgcGenerational, 1, None), 21).unwrap();
        assert!(flags.contains(&"-XX:+ZGenerational".to_string()));
        let half = GcSettings {
            heap_bytes: 512 * 1024 * 1024,
            ..settings(Gc::G1, 1, None)
        };
        let flags = render(&half, 17).unwrap();
        assert!(flags.ends_with(&["-Xms512M".to_string(), "-Xmx512M".to_string()]));
    }

    #[test]
    fn jdk25_generational_collectors() {
        let zgc = render(&settings(Gc::ZgcGenerational, 1, Some(2)), 25).unwrap();
        assert_eq!(
            zgc,
            [
                "-XX:+UseZGC",
                "-XX:ConcGCThreads=2",
                "-XX:ParallelGCThreads=2",
                "-XX:+UseTransparentHugePages",
                "-verbose:gc",
                "-Xms1G",
                "-Xmx1G"
            ]
        );
        let shenandoah = render(&settings(Gc::ShenandoahGenerational, 1, None), 25).unwrap();
        assert_eq!(
            shenandoah,
            [
                "-XX:+UseShenandoahGC",
                "-XX:ShenandoahGCMode=generational",
                "-XX:+UseTransparentHugePages",
                "-Xms1G",
                "-Xmx1G"
            ]
        );
        // Single-generation Shenandoah and G1 keep their seed flags on 25.
        let plain = render(&settings(Gc::Shenandoah, 1, None), 25).unwrap();
        assert!(!plain.iter().any(|f| f.contains("ShenandoahGCMode")));
        assert!(render(&settings(Gc::G1, 1, None), 25).is_ok());
    }

    #[test]
    fn generational_shenandoah_needs_jdk25() {
        for jdk in [11, 17, 21, 24] {
            let why = render(&settings(Gc::ShenandoahGenerational, 1, None), jdk)
                .unwrap_err()
                .to_string();
            assert!(why.contains("JDK 25"), "{why}");
            assert!(why.contains(&format!("JDK {jdk}")), "{why}");
        }
        let mut tuned = settings(Gc::ShenandoahGenerational, 1, None);
        tuned.profile = GcProfile::ShenandoahTuned;
        assert!(render(&tuned, 25)
            .unwrap_err()
            .to_string()
            .contains("--gc shenandoah"));
        let zgc25 = render(&settings(Gc::Zgc, 1, None), 25)
            .unwrap_err()
            .to_string();
        assert!(zgc25.contains("zgc-generational"), "{zgc25}");
    }

    #[test]
    fn impossible_combinations_are_refused_with_reason() {
        let cms17 = render(&settings(Gc::Cms, 1, None), 17)
            .unwrap_err()
            .to_string();
        assert!(cms17.contains("removed in JDK 14"), "{cms17}");
        let gen17 = render(&settings(Gc::ZgcGenerational, 1, None), 17)
            .unwrap_err()
            .to_string();
        assert!(gen17.contains("JDK 21"), "{gen17}");
        let mut tuned_g1 = settings(Gc::G1, 1, None);
        tuned_g1.profile = GcProfile::ShenandoahTuned;
        assert!(render(&tuned_g1, 17)
            .unwrap_err()
            .to_string()
            .contains("--gc shenandoah"));
        let tiny = GcSettings {
            heap_bytes: 64 * 1024 * 1024,
            ..settings(Gc::G1, 1, None)
        };
        assert!(render(&tiny, 17).unwrap_err().to_string().contains("256M"));
    }

    #[test]
    fn jdk8_has_cms_with_parnew_and_g1_but_no_concurrent_collectors() {
        let cms = render(&settings(Gc::Cms, 1, Some(2)), 8).unwrap();
        assert_eq!(&cms[..2], ["-XX:+UseParNewGC", "-XX:+UseConcMarkSweepGC"]);
        assert!(render(&settings(Gc::G1, 1, None), 8).is_ok());
        for gc in [Gc::Shenandoah, Gc::Zgc] {
            let why = render(&settings(gc, 1, None), 8).unwrap_err().to_string();
            assert!(
                why.contains(&format!("--gc {gc} cannot run on JDK 8"))
                    && why.contains("upstream JDK 8 has neither Shenandoah nor ZGC"),
                "{why}"
            );
            assert!(!why.contains('\n'));
        }
        for gc in [Gc::ZgcGenerational, Gc::ShenandoahGenerational] {
            assert!(render(&settings(gc, 1, None), 8).is_err(), "{gc}");
        }
        for jdk in [14, 17, 21, 25] {
            let why = render(&settings(Gc::Cms, 1, None), jdk)
                .unwrap_err()
                .to_string();
            assert!(
                why.contains("removed in JDK 14") && why.contains("--jdk 8"),
                "{why}"
            );
        }
    }

    #[test]
    fn zgc_on_jdk11_is_completed_with_unlock() {
        let flags = render(&settings(Gc::Zgc, 1, None), 11).unwrap();
        let unlock = flags
            .iter()
            .position(|f| f == "-XX:+UnlockExperimentalVMOptions");
        let zgc = flags.iter().position(|f| f == "-XX:+UseZGC");
        assert!(unlock.unwrap() < zgc.unwrap());
    }

    #[test]
    fn second_collector_in_jvm_opts_is_refused() {
        assert!(check_extra_opts(&["-XX:+UseZGC".to_string()]).is_err());
        assert!(check_extra_opts(&["-XX:+AlwaysPreTouch".to_string()]).is_ok());
    }

    #[test]
    fn parses_names() {
        for gc in Gc::ALL {
            assert_eq!(Gc::parse(gc.name()).unwrap(), gc);
        }
        assert_eq!(Gc::parse("G1").unwrap(), Gc::G1);
        assert!(Gc::parse("epsilon").is_err());
    }
}
