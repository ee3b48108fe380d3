//! The full `java` command line of a node: Cassandra's own server options for the JDK, cqlbench's
//! paths and ports, the collector flags, the always-on GC log, then the user's `--jvm-opt`s.

use std::path::Path;

/// `--add-exports`/`--add-opens` of Cassandra's `jvm11-server.options` (4.x on JDK 11).
const JDK11_MODULE_FLAGS: &[&str] = &[
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.util=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports=java.sql/java.sql=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
];

/// Cassandra 5.0's `jvm17-server.options` (also used for 6.0 on JDK 17).
const JDK17_MODULE_FLAGS: &[&str] = &[
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports=java.sql/java.sql=ALL-UNNAMED",
    "--add-exports=java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-exports=jdk.attach/sun.tools.attach=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
];

/// Trunk's `jvm21-server.options` (5.0/6.0 on JDK 21), plus the Security Manager opt-in they need.
const JDK21_MODULE_FLAGS: &[&str] = &[
    "--add-exports=java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports=java.sql/java.sql=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "-Djava.security.manager=allow",
];

/// The JPMS part of trunk's `jvm25-server.options` (5.0/6.0 on JDK 25): 21's exports and opens, no Security
/// Manager opt-in (fatal from JDK 24 on: "Enabling a Security Manager is not supported"), and the two options
/// that keep JDK 24+ from warning about `sun.misc.Unsafe` memory access (netty, jamm, …) and about native access
/// from class-path code (JNA, …).
const JDK25_MODULE_FLAGS: &[&str] = &[
    "--sun-misc-unsafe-memory-access=allow",
    "--enable-native-access=ALL-UNNAMED",
    "--add-exports=java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports=java.sql/java.sql=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
];

/// JPMS flags for a JDK major; JDK 8 needs none, 12–16 borrow 11's list, 18–20 borrow 17's, 22–23 21's.
pub fn module_flags(jdk_major: u32) -> Vec<String> {
    let list: &[&str] = match jdk_major {
        0..=10 => &[],
        11..=16 => JDK11_MODULE_FLAGS,
        17..=20 => JDK17_MODULE_FLAGS,
        21..=23 => JDK21_MODULE_FLAGS,
        _ => JDK25_MODULE_FLAGS,
    };
    let mut flags: Vec<String> = list.iter().map(|f| f.to_string()).collect();
    if jdk_major >= 11 {
        flags.push("-Djdk.attach.allowAttachSelf=true".to_string());
    }
    // Biased locking does not help Cassandra (jvm11-server.options); the flag is deprecated from 15 on.
    if (11..15).contains(&jdk_major) {
        flags.push("-XX:-UseBiasedLocking".to_string());
    }
    flags
}

/// Unified GC log with safepoint events, rotated: always on, so every run can be analysed.
pub fn gc_log_flag(gc_log: &Path) -> String {
    format!(
        "-Xlog:gc*,safepoint:file={}:time,uptime,level,tags:filecount=10,filesize=20M",
        gc_log.display()
    )
}

/// The GC log of a JDK 8 node: Cassandra 3.11's `jvm.options` logging flags (also 4.x's
/// `jvm8-server.options`) and its `-Xloggc` with rotation. The live part is `gc.log.<n>.current`;
/// [`cqlbench_gclog::rotated_parts`] finds every part.
pub const JDK8_GC_LOG_FLAGS: &[&str] = &[
    "-XX:+PrintGCDetails",
    "-XX:+PrintGCDateStamps",
    "-XX:+PrintHeapAtGC",
    "-XX:+PrintTenuringDistribution",
    "-XX:+PrintGCApplicationStoppedTime",
    "-XX:+PrintPromotionFailure",
    "-XX:+UseGCLogFileRotation",
    "-XX:NumberOfGCLogFiles=10",
    "-XX:GCLogFileSize=10M",
];

/// The always-on GC log flags for a JDK: unified logging with safepoints from JDK 9 on, Cassandra's
/// own JDK 8 flags before.
pub fn gc_log_flags(gc_log: &Path, jdk_major: u32) -> Vec<String> {
    if jdk_major >= 9 {
        return vec![gc_log_flag(gc_log)];
    }
    let mut flags: Vec<String> = JDK8_GC_LOG_FLAGS.iter().map(|f| f.to_string()).collect();
    flags.push(format!("-Xloggc:{}", gc_log.display()));
    flags
}

/// Joins of a fresh, empty cluster: no need to wait for gossip to settle or for range movements (nothing
/// to stream), so its nodes may join at once.
pub const FRESH_CLUSTER_JOIN: [&str; 2] = [
    "-Dcassandra.skip_wait_for_gossip_to_settle=0",
    "-Dcassandra.consistent.rangemovement=false",
];

/// Paths and ports a node needs on its command line.
pub struct NodeLaunch<'a> {
    pub node_dir: &'a Path,
    pub conf_dir: &'a Path,
    pub log_dir: &'a Path,
    pub data_dir: &'a Path,
    pub gc_log: &'a Path,
    pub jmx_port: u16,
    pub jamm_jar: &'a Path,
    pub classpath: &'a str,
}

pub const MAIN_CLASS: &str = "org.apache.cassandra.service.CassandraDaemon";

const SETTING_PREFIX: &str = "-Dcassandra.settings.";
const ALLOW_SETTINGS: &str = "-Dcassandra.config.allow_system_properties";

/// Cassandra reads `-Dcassandra.settings.NAME=VALUE` only when system properties are allowed:
/// a setting given alone would be ignored without a word, so it brings the permission with it
/// (unless the options already say either way).
fn settings_allowed(jvm_opts: &[String]) -> Option<String> {
    let gives_setting = jvm_opts.iter().any(|o| o.starts_with(SETTING_PREFIX));
    let says_allowed = jvm_opts.iter().any(|o| o.starts_with(ALLOW_SETTINGS));
    (gives_setting && !says_allowed).then(|| format!("{ALLOW_SETTINGS}=true"))
}

/// Assembles the complete argument list after `java`; `--jvm-opt`s come last so they win.
pub fn node_args(
    launch: &NodeLaunch,
    jdk_major: u32,
    gc_flags: &[String],
    jvm_opts: &[String],
) -> Vec<String> {
    let mut args: Vec<String> = vec![
        format!(
            "-Dcassandra.config=file://{}/cassandra.yaml",
            launch.conf_dir.display()
        ),
        format!("-Dcassandra.storagedir={}", launch.data_dir.display()),
        format!("-Dcassandra.logdir={}", launch.log_dir.display()),
        format!(
            "-Dlogback.configurationFile={}/logback.xml",
            launch.conf_dir.display()
        ),
        format!(
            "-Dcassandra.triggers_dir={}/triggers",
            launch.node_dir.display()
        ),
        "-Dcassandra-foreground=yes".to_string(),
        format!("-Dcassandra.jmx.local.port={}", launch.jmx_port),
        format!("-javaagent:{}", launch.jamm_jar.display()),
        "-Dcassandra.superuser_setup_delay_ms=0".to_string(),
        "-Djava.net.preferIPv4Stack=true".to_string(),
        "-Xss256k".to_string(),
        "-XX:+UseThreadPriorities".to_string(),
        "-XX:StringTableSize=1000003".to_string(),
        "-XX:+UseTLAB".to_string(),
        "-XX:+ResizeTLAB".to_string(),
        "-XX:+HeapDumpOnOutOfMemoryError".to_string(),
        format!("-XX:HeapDumpPath={}", launch.node_dir.display()),
        "-Dio.netty.tryReflectionSetAccessible=true".to_string(),
        "-Dio.netty.allocator.useCacheForAllThreads=true".to_string(),
        "-Dio.netty.allocator.maxOrder=11".to_string(),
    ];
    args.extend(FRESH_CLUSTER_JOIN.iter().map(|f| f.to_string()));
    args.extend(module_flags(jdk_major));
    args.extend(gc_flags.iter().cloned());
    args.extend(gc_log_flags(launch.gc_log, jdk_major));
    args.extend(settings_allowed(jvm_opts));
    args.extend(jvm_opts.iter().cloned());
    args.push("-cp".to_string());
    args.push(launch.classpath.to_string());
    args.push(MAIN_CLASS.to_string());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cassandra_yaml_setting_brings_the_permission_to_read_it() {
        let opts = |list: &[&str]| list.iter().map(|o| o.to_string()).collect::<Vec<_>>();
        let setting = "-Dcassandra.settings.materialized_views_enabled=false";
        assert_eq!(
            settings_allowed(&opts(&[setting])).as_deref(),
            Some("-Dcassandra.config.allow_system_properties=true")
        );
        let refused = "-Dcassandra.config.allow_system_properties=false";
        assert_eq!(settings_allowed(&opts(&[refused, setting])), None);
        assert_eq!(settings_allowed(&opts(&["-XX:+AlwaysPreTouch"])), None);
    }

    #[test]
    fn gc_log_has_safepoints_and_rotation() {
        let flag = gc_log_flag(Path::new("/n/logs/gc.log"));
        assert_eq!(
            flag,
            "-Xlog:gc*,safepoint:file=/n/logs/gc.log:time,uptime,level,tags:filecount=10,filesize=20M"
        );
    }

    #[test]
    fn jdk8_logs_gc_as_cassandra_3_11_does() {
        let flags = gc_log_flags(Path::new("/n/logs/gc.log"), 8);
        for flag in [
            "-XX:+PrintGCDetails",
            "-XX:+PrintGCDateStamps",
            "-XX:+PrintHeapAtGC",
            "-XX:+PrintTenuringDistribution",
            "-XX:+PrintGCApplicationStoppedTime",
            "-XX:+UseGCLogFileRotation",
            "-Xloggc:/n/logs/gc.log",
        ] {
            assert!(flags.contains(&flag.to_string()), "{flag}");
        }
        assert!(!flags.iter().any(|f| f.starts_with("-Xlog:")));
        assert_eq!(
            gc_log_flags(Path::new("/n/logs/gc.log"), 11),
            [gc_log_flag(Path::new("/n/logs/gc.log"))]
        );
        assert!(module_flags(8).is_empty());
    }

    #[test]
    fn module_flags_per_jdk() {
        let jdk11 = module_flags(11);
        assert!(
            jdk11.contains(&"--add-exports=java.base/jdk.internal.util=ALL-UNNAMED".to_string())
        );
        assert!(jdk11.contains(&"-XX:-UseBiasedLocking".to_string()));
        let jdk17 = module_flags(17);
        assert!(jdk17.contains(&"--add-opens=java.base/java.lang=ALL-UNNAMED".to_string()));
        assert!(!jdk17.iter().any(|f| f.contains("security.manager")));
        let jdk21 = module_flags(21);
        assert!(jdk21.contains(&"-Djava.security.manager=allow".to_string()));
        let jdk25 = module_flags(25);
        assert!(!jdk25.iter().any(|f| f.contains("security.manager")));
        for flag in [
            "--sun-misc-unsafe-memory-access=allow",
            "--enable-native-access=ALL-UNNAMED",
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "-Djdk.attach.allowAttachSelf=true",
        ] {
            assert!(jdk25.contains(&flag.to_string()), "{flag}");
        }
        // Everything 21 opens except the Security Manager opt-in, 25 opens too.
        for flag in jdk21.iter().filter(|f| !f.contains("security.manager")) {
            assert!(jdk25.contains(flag), "{flag}");
        }
    }

    #[test]
    fn user_options_come_after_gc_flags() {
        let p = Path::new("/n");
        let launch = NodeLaunch {
            node_dir: p,
            conf_dir: p,
            log_dir: p,
            data_dir: p,
            gc_log: p,
            jmx_port: 7199,
            jamm_jar: p,
            classpath: "/lib/*",
        };
        let args = node_args(
            &launch,
            17,
            &["-XX:+UseG1GC".to_string()],
            &["-XX:+AlwaysPreTouch".to_string()],
        );
        let gc = args.iter().position(|a| a == "-XX:+UseG1GC").unwrap();
        let user = args
            .iter()
            .position(|a| a == "-XX:+AlwaysPreTouch")
            .unwrap();
        assert!(gc < user);
        assert_eq!(args.last().unwrap(), MAIN_CLASS);
        assert!(args.contains(&"-Dcassandra.jmx.local.port=7199".to_string()));
    }
}
