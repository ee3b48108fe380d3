//! A cluster that lives exactly as long as one piece of work: started for it, stopped after it, also
//! when the work fails or Ctrl-C arrives while the nodes are still starting. `cqlbench run` (its
//! embedded node) and `cqlbench campaign` (a fresh cluster per configuration) share this.

use crate::error::{ClusterError, Result};
use crate::home::Home;
use crate::lifecycle;
use crate::spec::ClusterSpec;
use crate::state::ClusterState;

/// Starts `spec`, runs `work` on the ready cluster, and stops the cluster whatever happened.
///
/// Errors come back in the order an operator needs them: a failed start, an interruption during
/// start-up ([`ClusterError::InterruptedStart`]), the work's own error, and only then a failed stop.
/// Call [`interrupt::defer`] first so that Ctrl-C is noted instead of ending the process.
pub fn with_cluster<T, E>(
    home: &Home,
    spec: &ClusterSpec,
    progress: &mut dyn FnMut(&str),
    work: impl FnOnce(&ClusterState, &mut dyn FnMut(&str)) -> std::result::Result<T, E>,
) -> std::result::Result<T, E>
where
    E: From<ClusterError>,
{
    let started = lifecycle::up(home, spec, progress);
    let interrupted_in_startup = interrupt::received();
    let outcome = match &started {
        Ok(state) if !interrupted_in_startup => Some(work(state, progress)),
        _ => None,
    };
    // Stop the nodes even if start-up half-failed: nothing started here may outlive the work.
    let stopped = lifecycle::down(home, &spec.name, progress);
    started?;
    if interrupted_in_startup {
        return Err(ClusterError::InterruptedStart {
            name: spec.name.clone(),
        }
        .into());
    }
    let value = outcome.expect("the work ran when the cluster started uninterrupted")?;
    stopped?;
    Ok(value)
}

/// Checks everything `up` would refuse before fetching or starting anything (version, JDK pair,
/// collector on that JDK, options), so a plan of many clusters can be refused as a whole up front.
pub fn check_spec(spec: &ClusterSpec) -> Result<()> {
    lifecycle::precheck(spec).map(|_| ())
}

/// SIGINT noted instead of ending the process. The load engine adds its own handler for a run, which
/// chains to this one, so a Ctrl-C is both seen by the run (it stops) and remembered here.
pub mod interrupt {
    use std::sync::atomic::{AtomicBool, Ordering};

    static RECEIVED: AtomicBool = AtomicBool::new(false);

    extern "C" fn note(_: libc::c_int) {
        RECEIVED.store(true, Ordering::SeqCst);
        let message =
            b"\ncqlbench: interrupted: stopping cleanly (the nodes are stopped before exit)\n";
        // SAFETY: write(2) is async-signal-safe; the buffer is static.
        unsafe { libc::write(2, message.as_ptr().cast(), message.len()) };
    }

    /// Installs the noting handler (idempotent).
    pub fn defer() {
        // SAFETY: the handler only stores to an atomic and calls write(2), both async-signal-safe.
        unsafe { libc::signal(libc::SIGINT, note as *const () as libc::sighandler_t) };
    }

    /// True once a SIGINT arrived after [`defer`].
    pub fn received() -> bool {
        RECEIVED.load(Ordering::SeqCst)
    }
}
