//! Starting and stopping the `--prometheus` exporter around a run or a whole campaign.

use cqlbench_load::PrometheusOptions;
use cqlbench_metrics::{Exporter, LiveMetrics};

use crate::error::CampaignError;

/// Listens on `--prometheus`'s address now, so that a port in use is refused before anything starts.
pub fn start_exporter(
    options: Option<PrometheusOptions>,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<Exporter>, CampaignError> {
    let Some(options) = options else {
        return Ok(None);
    };
    let exporter = Exporter::start(options.addr, LiveMetrics::new())?;
    progress(&format!(
        "cqlbench: live figures for Prometheus at http://{}/metrics",
        exporter.local_addr()
    ));
    Ok(Some(exporter))
}

/// Keeps serving for `--prometheus-linger` (the last scrape sees the final counts), then stops.
pub fn stop_exporter(
    exporter: Option<Exporter>,
    options: Option<PrometheusOptions>,
    progress: &mut dyn FnMut(&str),
) {
    let (Some(exporter), Some(options)) = (exporter, options) else {
        return;
    };
    if !options.linger.is_zero() {
        progress(&format!(
            "cqlbench: serving the final figures at http://{}/metrics for {} s more (--prometheus-linger)",
            exporter.local_addr(),
            options.linger.as_secs_f64()
        ));
    }
    exporter.stop_after(options.linger);
}
