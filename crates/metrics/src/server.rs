//! The exporter: one thread answering `GET /metrics` on a listening socket.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::exposition::LiveMetrics;
use crate::MetricsError;

/// The port Prometheus' list of default ports gives to OpenTelemetry-style exporters, free of
/// Cassandra's and Prometheus' own.
pub const DEFAULT_PORT: u16 = 9464;

/// A scraper that sends nothing is dropped after this long, so that it cannot hold the exporter.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
const MAX_REQUEST: usize = 16 * 1024;

/// `HOST:PORT` (an IP address, `localhost`, or `[v6]`), refused unless it is a loopback address or
/// `public` allows any.
pub fn parse_listen_address(text: &str, public: bool) -> Result<SocketAddr, MetricsError> {
    let malformed = || MetricsError::Malformed {
        given: text.to_string(),
    };
    let addr = match text.strip_prefix("localhost:") {
        Some(port) => SocketAddr::new(
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            port.parse().map_err(|_| malformed())?,
        ),
        None => text.parse().map_err(|_| malformed())?,
    };
    if !addr.ip().is_loopback() && !public {
        return Err(MetricsError::NotLoopback { addr });
    }
    Ok(addr)
}

/// Serves [`LiveMetrics`] until stopped (or dropped).
#[derive(Debug)]
pub struct Exporter {
    addr: SocketAddr,
    metrics: LiveMetrics,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Exporter {
    /// Listens on `addr` now (so that a port in use is known before anything starts) and serves from
    /// a thread of its own.
    pub fn start(addr: SocketAddr, metrics: LiveMetrics) -> Result<Exporter, MetricsError> {
        let listener = TcpListener::bind(addr).map_err(|source| match source.kind() {
            std::io::ErrorKind::AddrInUse => MetricsError::InUse { addr },
            _ => MetricsError::Listen { addr, source },
        })?;
        let addr = listener
            .local_addr()
            .map_err(|source| MetricsError::Listen { addr, source })?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("cqlbench-metrics".into())
            .spawn({
                let (metrics, stop) = (metrics.clone(), stop.clone());
                move || serve(listener, &metrics, &stop)
            })
            .map_err(|source| MetricsError::Listen { addr, source })?;
        Ok(Exporter {
            addr,
            metrics,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on (the port the system chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn metrics(&self) -> &LiveMetrics {
        &self.metrics
    }

    /// Serves for `linger` more (so that the last scrape sees the final counts), then stops.
    pub fn stop_after(mut self, linger: Duration) {
        std::thread::sleep(linger);
        self.shut_down();
    }

    fn shut_down(&mut self) {
        let Some(thread) = self.thread.take() else {
            return;
        };
        self.stop.store(true, Ordering::SeqCst);
        // accept() blocks: one connection of our own wakes it to see the flag.
        let _ = TcpStream::connect_timeout(&wake_address(self.addr), REQUEST_TIMEOUT);
        let _ = thread.join();
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// Where to connect to reach a listener on `addr` (an unspecified address listens on loopback too).
fn wake_address(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => (Ipv4Addr::LOCALHOST, addr.port()).into(),
        IpAddr::V6(ip) if ip.is_unspecified() => (Ipv6Addr::LOCALHOST, addr.port()).into(),
        _ => addr,
    }
}

fn serve(listener: TcpListener, metrics: &LiveMetrics, stop: &AtomicBool) {
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        // A failed accept or a scraper gone mid-answer concerns that connection only.
        if let Ok(stream) = stream {
            let _ = answer(stream, metrics);
        }
    }
}

fn answer(mut stream: TcpStream, metrics: &LiveMetrics) -> std::io::Result<()> {
    stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    stream.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    let request = read_request_head(&mut stream)?;
    let mut words = request.split_ascii_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, content_type, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            metrics.render(),
        ),
        ("GET" | "HEAD", "/") => (
            "200 OK",
            "text/plain; charset=utf-8",
            "cqlbench: the run's live figures are at /metrics\n".to_string(),
        ),
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "not found: try /metrics\n".into(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "only GET\n".into(),
        ),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    if method != "HEAD" {
        stream.write_all(body.as_bytes())?;
    }
    stream.flush()
}

/// The request up to the blank line that ends its head (the body of a GET, if any, is ignored).
fn read_request_head(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut stream = TcpStream::connect(addr).unwrap();
        write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    }

    #[test]
    fn addresses_are_loopback_unless_made_public() {
        assert_eq!(
            parse_listen_address("127.0.0.1:9464", false).unwrap(),
            "127.0.0.1:9464".parse().unwrap()
        );
        assert!(parse_listen_address("[::1]:1", false).is_ok());
        assert!(parse_listen_address("localhost:9464", false).is_ok());
        for bad in [
            "",
            "9464",
            "127.0.0.1",
            "127.0.0.1:99999",
            "host:1",
            "localhost:x",
        ] {
            let error = parse_listen_address(bad, false).unwrap_err().to_string();
            assert!(error.contains("not an address and port"), "{bad}: {error}");
        }
        let error = parse_listen_address("0.0.0.0:9464", false)
            .unwrap_err()
            .to_string();
        assert!(error.contains("--prometheus-public"), "{error}");
        assert!(parse_listen_address("0.0.0.0:9464", true).is_ok());
    }

    #[test]
    fn serves_metrics_refuses_a_port_in_use_and_stops_when_told() {
        let metrics = LiveMetrics::new();
        metrics.begin_run(&["write"], &[], Some(10.0));
        let exporter = Exporter::start("127.0.0.1:0".parse().unwrap(), metrics).unwrap();
        let addr = exporter.local_addr();
        let answer = get(addr, "/metrics");
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.contains("text/plain; version=0.0.4"));
        assert!(answer.contains("cqlbench_target_rate_ops_per_second 10\n"));
        assert!(get(addr, "/nothing").starts_with("HTTP/1.1 404"));
        let error = Exporter::start(addr, LiveMetrics::new())
            .unwrap_err()
            .to_string();
        assert!(error.contains("in use"), "{error}");
        exporter.stop_after(Duration::ZERO);
        assert!(
            TcpStream::connect(addr).is_err(),
            "nothing listens after the stop"
        );
    }
}
