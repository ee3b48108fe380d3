//! The load loop: each client thread owns its connections and runs one epoll loop that sends the
//! operations that are due, reads responses and stamps completions, with no task hand-offs, channels
//! or locks between sending and measuring. A thread sleeps only in `epoll_pwait2`, until the next
//! operation is due or a response arrives, so the client's own delay stays in microseconds and costs
//! one wake-up per event.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cqlbench_cql::{
    self as cql, classify_error, error_code, parse_header, ConnectOptions, ErrorClass,
    ExecuteFrame, Opcode, Stream, HEADER_LEN, MAX_STREAMS,
};

use crate::poll::{self, Epoll};
use crate::recorder::{Completion, ErrorKind, IntervalRecorder};
use crate::topology::{token_of, Topology};
use crate::workload::OpType;

/// Largest response accepted (a LIMIT 500 slice of wide rows is well under this).
const MAX_FRAME: usize = 256 << 20;
/// A thread looks at the stop flag at least this often.
const STOP_POLL: Duration = Duration::from_millis(100);
/// Between reconnection attempts to a node whose connection broke.
const RECONNECT_EVERY: Duration = Duration::from_secs(1);

/// What every client thread needs to open and use connections.
#[derive(Clone)]
pub struct WireConfig {
    pub topology: Topology,
    pub connect: ConnectOptions,
    /// CQL of the statements, by [`OpType::index`].
    pub statements: [String; 2],
    pub consistency: u16,
    pub serial_consistency: u16,
    pub request_timeout: Duration,
}

/// Prepared statement ids, by [`OpType::index`].
type Ids = [Vec<u8>; 2];

/// Opens and prepares one connection (blocking), then switches it to non-blocking mode.
fn open(addr: SocketAddr, config: &WireConfig) -> Result<(Stream, Ids), cql::CqlError> {
    let mut stream = cql::connect(addr, &config.connect)?;
    let read = cql::prepare(&mut stream, &config.statements[OpType::Read.index()])?;
    let write = cql::prepare(&mut stream, &config.statements[OpType::Write.index()])?;
    stream.set_nonblocking(true)?;
    let mut ids: Ids = Default::default();
    ids[OpType::Read.index()] = read.id;
    ids[OpType::Write.index()] = write.id;
    Ok((stream, ids))
}

/// An operation waiting for its response.
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    pub op: OpType,
    pub intended: Option<Instant>,
    pub sent: Instant,
    pub slot_limited: bool,
}

impl Pending {
    fn complete(self, done: Instant, error: Option<ErrorKind>) -> Completion {
        Completion {
            op: self.op,
            intended: self.intended.unwrap_or(self.sent),
            sent: self.sent,
            done,
            error,
            slot_limited: self.slot_limited,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum SlotState {
    Free,
    Busy(Pending),
    /// Timed out (already recorded); the stream id stays taken until the late answer arrives.
    Orphan,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    generation: u32,
    state: SlotState,
}

type Reconnect = JoinHandle<Result<(Stream, Ids), cql::CqlError>>;

/// One connection of one thread.
struct Conn {
    node: usize,
    stream: Option<Stream>,
    out: Vec<u8>,
    out_at: usize,
    inbuf: Vec<u8>,
    in_start: usize,
    in_end: usize,
    slots: Vec<Slot>,
    free: Vec<u16>,
    /// (deadline, stream id, slot generation) in send order.
    deadlines: VecDeque<(Instant, u16, u32)>,
    /// Requests sent and not yet answered nor timed out.
    live: usize,
    wants_writable: bool,
    /// The server forgot a prepared statement: reconnect, which prepares again.
    needs_reconnect: bool,
    reconnect: Option<Reconnect>,
    retry_at: Option<Instant>,
}

impl Conn {
    fn new(node: usize, stream: Option<Stream>) -> Conn {
        let stream_is_down = stream.is_none();
        Conn {
            node,
            stream,
            out: Vec::with_capacity(16 * 1024),
            out_at: 0,
            inbuf: vec![0; 64 * 1024],
            in_start: 0,
            in_end: 0,
            slots: Vec::new(),
            free: Vec::new(),
            deadlines: VecDeque::new(),
            live: 0,
            wants_writable: false,
            needs_reconnect: false,
            reconnect: None,
            retry_at: stream_is_down.then(Instant::now),
        }
    }

    fn is_up(&self) -> bool {
        self.stream.is_some()
    }

    fn can_take(&self) -> bool {
        self.is_up() && (!self.free.is_empty() || self.slots.len() < MAX_STREAMS)
    }

    fn take_slot(&mut self) -> Option<u16> {
        if let Some(id) = self.free.pop() {
            return Some(id);
        }
        if self.slots.len() < MAX_STREAMS {
            self.slots.push(Slot {
                generation: 0,
                state: SlotState::Free,
            });
            return Some((self.slots.len() - 1) as u16);
        }
        None
    }

    fn release(&mut self, id: u16) {
        let slot = &mut self.slots[id as usize];
        slot.state = SlotState::Free;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(id);
    }

    /// Queues `frame` (a complete EXECUTE with stream id 0) under a fresh stream id.
    fn start(&mut self, frame: &[u8], pending: Pending, timeout: Duration) -> bool {
        let Some(id) = self.take_slot() else {
            return false;
        };
        let at = self.out.len();
        self.out.extend_from_slice(frame);
        self.out[at + 2..at + 4].copy_from_slice(&(id as i16).to_be_bytes());
        let slot = &mut self.slots[id as usize];
        slot.state = SlotState::Busy(pending);
        self.deadlines
            .push_back((pending.sent + timeout, id, slot.generation));
        self.live += 1;
        true
    }

    /// Writes queued bytes; `Ok(false)` when the socket is full.
    fn flush(&mut self) -> io::Result<bool> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(true);
        };
        while self.out_at < self.out.len() {
            match stream.write(&self.out[self.out_at..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.out_at += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.out.clear();
        self.out_at = 0;
        Ok(true)
    }

    /// Reads what arrived and completes the answered operations at `now`.
    fn read(&mut self, now: Instant, completed: &mut Vec<Completion>) -> io::Result<()> {
        loop {
            if self.in_end == self.inbuf.len() {
                if self.in_start > 0 {
                    self.inbuf.copy_within(self.in_start..self.in_end, 0);
                    self.in_end -= self.in_start;
                    self.in_start = 0;
                } else {
                    let grown = self.inbuf.len() * 2;
                    self.inbuf.resize(grown, 0);
                }
            }
            let Some(stream) = self.stream.as_mut() else {
                return Ok(());
            };
            let space = self.inbuf.len() - self.in_end;
            let tls = stream.is_tls();
            match stream.read(&mut self.inbuf[self.in_end..]) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    self.in_end += n;
                    self.parse(now, completed)?;
                    // Level-triggered epoll reports plain sockets again if more is waiting; TLS may
                    // hold decrypted bytes the socket no longer shows, so read those until empty.
                    if !tls && n < space {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn parse(&mut self, now: Instant, completed: &mut Vec<Completion>) -> io::Result<()> {
        let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
        while let Some(header) = parse_header(&self.inbuf[self.in_start..self.in_end]) {
            if !header.is_response() || header.length > MAX_FRAME {
                return Err(bad(format!("unexpected frame header {header:?}")));
            }
            if self.in_end - self.in_start < header.frame_len() {
                break;
            }
            let body = &self.inbuf[self.in_start + HEADER_LEN..self.in_start + header.frame_len()];
            let outcome = if header.opcode == Opcode::Error as u8 {
                Some(error_code(header.flags, body).map_or(ErrorClass::Other, classify_error))
            } else {
                None
            };
            self.in_start += header.frame_len();
            if header.stream < 0 || header.stream as usize >= self.slots.len() {
                continue; // events, or nothing of ours
            }
            let id = header.stream as u16;
            match self.slots[id as usize].state {
                SlotState::Busy(pending) => {
                    let error = outcome.map(|class| match class {
                        ErrorClass::Timeout => ErrorKind::Timeout,
                        ErrorClass::Unavailable => ErrorKind::Unavailable,
                        ErrorClass::Overloaded => ErrorKind::Overloaded,
                        ErrorClass::Unprepared => {
                            self.needs_reconnect = true;
                            ErrorKind::Other
                        }
                        ErrorClass::Other => ErrorKind::Other,
                    });
                    completed.push(pending.complete(now, error));
                    self.live -= 1;
                    self.release(id);
                }
                SlotState::Orphan => self.release(id),
                SlotState::Free => {}
            }
        }
        if self.in_start == self.in_end {
            self.in_start = 0;
            self.in_end = 0;
        }
        Ok(())
    }

    /// Completes operations whose request timeout passed; returns the next deadline.
    fn expire(&mut self, now: Instant, completed: &mut Vec<Completion>) -> Option<Instant> {
        while let Some(&(deadline, id, generation)) = self.deadlines.front() {
            let slot = &mut self.slots[id as usize];
            let pending = match slot.state {
                SlotState::Busy(p) if slot.generation == generation => p,
                _ => {
                    self.deadlines.pop_front();
                    continue;
                }
            };
            if deadline > now {
                return Some(deadline);
            }
            self.deadlines.pop_front();
            // The operation failed when its timeout ran out, however late this loop noticed it.
            completed.push(pending.complete(deadline, Some(ErrorKind::Timeout)));
            slot.state = SlotState::Orphan;
            self.live -= 1;
        }
        None
    }

    /// Drops a broken connection: its unanswered operations fail at `now`; a reconnect follows.
    fn fail(&mut self, now: Instant, completed: &mut Vec<Completion>) {
        for slot in &self.slots {
            if let SlotState::Busy(p) = slot.state {
                completed.push(p.complete(now, Some(ErrorKind::Other)));
            }
        }
        self.stream = None; // closing the socket also removes it from epoll
        self.slots.clear();
        self.free.clear();
        self.deadlines.clear();
        self.out.clear();
        self.out_at = 0;
        self.in_start = 0;
        self.in_end = 0;
        self.live = 0;
        self.wants_writable = false;
        self.needs_reconnect = false;
        self.retry_at = Some(now);
    }
}

/// One thread's connections: `per_node` to each node of the topology.
pub struct ThreadConns {
    conns: Vec<Conn>,
    per_node: usize,
    next_of_node: Vec<usize>,
    next_any: usize,
    ids: Ids,
    frame: Vec<u8>,
}

impl ThreadConns {
    /// Opens `per_node` connections to every node. Nodes that cannot be reached are retried in the
    /// background while the run goes; it is an error only if no connection at all could be opened.
    pub fn open(config: &WireConfig, per_node: usize) -> Result<ThreadConns, cql::CqlError> {
        let per_node = per_node.max(1);
        let mut conns = Vec::new();
        let mut ids: Option<Ids> = None;
        let mut last_error = None;
        for (node, addr) in config.topology.nodes.iter().enumerate() {
            for _ in 0..per_node {
                match open(*addr, config) {
                    // Cassandra and ScyllaDB derive a prepared id from the statement and keyspace,
                    // so every node gives the same one; a connection that does not is left down.
                    Ok((stream, got)) if ids.as_ref().is_none_or(|known| *known == got) => {
                        ids.get_or_insert(got);
                        conns.push(Conn::new(node, Some(stream)));
                    }
                    Ok(_) => {
                        last_error = Some(cql::CqlError::Protocol(format!(
                            "{addr} gave a different prepared statement id"
                        )));
                        conns.push(Conn::new(node, None));
                    }
                    Err(e) => {
                        last_error = Some(e);
                        conns.push(Conn::new(node, None));
                    }
                }
            }
        }
        let Some(ids) = ids else {
            return Err(last_error
                .unwrap_or_else(|| cql::CqlError::Protocol("the cluster has no nodes".into())));
        };
        Ok(ThreadConns {
            next_of_node: vec![0; config.topology.nodes.len()],
            conns,
            per_node,
            next_any: 0,
            ids,
            frame: Vec::with_capacity(1024),
        })
    }

    fn live(&self) -> usize {
        self.conns.iter().map(|c| c.live).sum()
    }

    /// A connection to `node` that can take a request, round-robin among the node's connections.
    fn conn_of(&mut self, node: usize) -> Option<usize> {
        let first = node * self.per_node;
        for k in 0..self.per_node {
            let i = first + (self.next_of_node[node] + k) % self.per_node;
            if self.conns.get(i).is_some_and(Conn::can_take) {
                self.next_of_node[node] = (self.next_of_node[node] + k + 1) % self.per_node;
                return Some(i);
            }
        }
        None
    }

    /// A replica of the key's token if one is connected, else any connected node.
    fn route(&mut self, topology: &Topology, key: &[u8]) -> Option<usize> {
        for &node in topology.replicas(token_of(key)) {
            if let Some(i) = self.conn_of(node) {
                return Some(i);
            }
        }
        let n = self.conns.len();
        for k in 0..n {
            let i = (self.next_any + k) % n;
            if self.conns[i].can_take() {
                self.next_any = (i + 1) % n;
                return Some(i);
            }
        }
        None
    }

    /// Encodes one operation with `bind` (which writes the bound values and returns the partition
    /// key's bytes range) and queues it on a connection to one of its replicas. `false` if no
    /// connection can take it.
    pub fn send(
        &mut self,
        config: &WireConfig,
        pending: Pending,
        bind: impl FnOnce(&mut ExecuteFrame) -> Range<usize>,
    ) -> bool {
        let mut frame = std::mem::take(&mut self.frame);
        frame.clear();
        let mut execute = ExecuteFrame::begin(
            &mut frame,
            0,
            &self.ids[pending.op.index()],
            config.consistency,
            config.serial_consistency,
        );
        let key = bind(&mut execute);
        execute.finish();
        let sent = match self.route(&config.topology, &frame[key]) {
            Some(i) => self.conns[i].start(&frame, pending, config.request_timeout),
            None => false,
        };
        self.frame = frame;
        sent
    }
}

/// One phase (populate, or warm-up plus measured run), as every client thread runs its share of it.
#[derive(Clone)]
pub struct Phase {
    /// Global index of the phase's first operation.
    pub base: u64,
    /// Operations in the phase, or `None` to run until `deadline`.
    pub count: Option<u64>,
    /// Operations per second over all threads; `None` = unthrottled.
    pub rate: Option<f64>,
    pub start: Instant,
    /// Unthrottled phases with a duration stop sending here.
    pub deadline: Option<Instant>,
    /// Scheduled operations not yet sent by this time are given up (and counted).
    pub drain_deadline: Option<Instant>,
    /// Operations intended before this belong to the warm-up.
    pub measure_start: Instant,
    /// Requests in flight per thread.
    pub concurrency: usize,
    pub threads: u64,
    /// A thread's consecutive operations released together (see `RunOptions::release_group`).
    pub group: u64,
}

/// One thread's share of a phase: a fixed-rate schedule or as fast as slots allow.
pub struct Schedule<'a> {
    pub phase: &'a Phase,
    pub thread: u64,
    /// Unthrottled threads claim operation numbers from this shared counter.
    pub claim: &'a AtomicU64,
}

impl Schedule<'_> {
    /// When operation `relative` (one of this thread's) is released: operations go out in groups of
    /// `group` consecutive ones of the thread, all at the time the first of the group is due.
    pub fn release_time(&self, relative: u64, interval_nanos: f64) -> Instant {
        let (threads, group) = (self.phase.threads, self.phase.group);
        let own = (relative - self.thread) / threads;
        let first = self.thread + (own - own % group) * threads;
        self.phase.start + Duration::from_nanos((first as f64 * interval_nanos) as u64)
    }
}

/// What a thread's loop needs from the engine.
pub struct LoopIo<'a> {
    pub stop: &'a AtomicBool,
    pub recorder: &'a Mutex<IntervalRecorder>,
}

/// How a thread's loop ended.
pub struct LoopOutcome {
    /// Scheduled operations never sent (the phase was stopped or the server fell too far behind).
    pub unsent: u64,
    /// A failure of the loop itself (not of operations), e.g. epoll could not be set up.
    pub failure: Option<String>,
}

/// Runs one thread's share of a phase to its end. `op_type` names the operation type of an index;
/// `bind` writes an operation's bound values.
pub fn run_loop(
    config: &WireConfig,
    conns: &mut ThreadConns,
    schedule: &Schedule,
    io: &LoopIo,
    op_type: impl Fn(u64) -> OpType,
    mut bind: impl FnMut(u64, OpType, &mut ExecuteFrame) -> Range<usize>,
) -> LoopOutcome {
    let mut epoll = match Epoll::new() {
        Ok(e) => e,
        Err(e) => {
            return LoopOutcome {
                unsent: 0,
                failure: Some(format!("epoll: {e}")),
            }
        }
    };
    // The kernel may wake this thread up to 10 µs after an operation is due (50 µs by default).
    poll::set_timer_slack(Duration::from_micros(10));
    for (i, conn) in conns.conns.iter_mut().enumerate() {
        conn.wants_writable = false;
        if let Some(s) = &conn.stream {
            let _ = epoll.add(s.as_raw_fd(), i as u64, poll::READABLE);
        }
    }
    let phase = schedule.phase;
    let interval_nanos = phase.rate.map(|rate| 1e9 / rate);
    let mut completed: Vec<Completion> = Vec::with_capacity(256);
    // Rate mode: relative number (within the phase, over all threads) of this thread's next operation.
    let mut cursor = schedule.thread;
    let mut claimed: Option<u64> = None;
    let mut exhausted = false;
    let mut blocked = false;
    loop {
        let now = Instant::now();
        // Connections first: failed ones are dropped or reconnected, timed-out requests completed
        // (freeing their slots before sending), and the earliest remaining deadline noted.
        let mut wake = now + STOP_POLL;
        let mut reconnecting = false;
        for (i, conn) in conns.conns.iter_mut().enumerate() {
            if conn.needs_reconnect {
                conn.fail(now, &mut completed);
            }
            if !conn.is_up() {
                maintain(config, &epoll, i, conn, &conns.ids, now);
                reconnecting |= !conn.is_up();
            }
            if let Some(deadline) = conn.expire(now, &mut completed) {
                wake = wake.min(deadline);
            }
        }
        let stopping = io.stop.load(Ordering::Relaxed);
        let mut next_due = None;
        let mut no_connection = false;
        let mut sent_any = false;
        if !stopping && !exhausted {
            let was_blocked = blocked;
            blocked = false;
            loop {
                let (relative, intended) = match interval_nanos {
                    Some(nanos) => {
                        if phase.count.is_some_and(|c| cursor >= c) {
                            exhausted = true;
                            break;
                        }
                        let due = schedule.release_time(cursor, nanos);
                        if due > now {
                            next_due = Some(due);
                            break;
                        }
                        if phase.drain_deadline.is_some_and(|d| now > d) {
                            exhausted = true;
                            break;
                        }
                        (cursor, Some(due))
                    }
                    None => {
                        if now < phase.start {
                            next_due = Some(phase.start); // the phase starts with all threads
                            break;
                        }
                        if phase.deadline.is_some_and(|d| now >= d) {
                            exhausted = true;
                            break;
                        }
                        let n = *claimed
                            .get_or_insert_with(|| schedule.claim.fetch_add(1, Ordering::Relaxed));
                        if phase.count.is_some_and(|c| n >= c) {
                            exhausted = true;
                            break;
                        }
                        (n, None)
                    }
                };
                if conns.live() >= phase.concurrency {
                    blocked = true;
                    break;
                }
                let index = phase.base + relative;
                let op = op_type(index);
                let slot_limited = was_blocked && intended.is_some_and(|due| now > due);
                let pending = Pending {
                    op,
                    intended,
                    sent: now,
                    slot_limited,
                };
                if slot_limited {
                    if let Ok(mut r) = io.recorder.lock() {
                        r.concurrency_limited += 1;
                    }
                }
                if conns.send(config, pending, |f| bind(index, op, f)) {
                    sent_any = true;
                } else {
                    if intended.is_none() {
                        // Unthrottled: no node is reachable; wait for a reconnection rather than
                        // turning the operation budget into errors at full speed.
                        no_connection = true;
                        break;
                    }
                    completed.push(pending.complete(now, Some(ErrorKind::Other)));
                }
                match interval_nanos {
                    Some(_) => cursor += phase.threads,
                    None => claimed = None,
                }
            }
        }
        for (i, conn) in conns.conns.iter_mut().enumerate() {
            if conn.out.len() > conn.out_at {
                flush(&epoll, i, conn, now, &mut completed);
            }
        }
        record(io, phase.measure_start, &mut completed);
        if (exhausted || stopping) && conns.live() == 0 {
            break;
        }

        // Sleep until the next operation is due, a response arrives, a request times out, or it is
        // time to look at the stop flag or a reconnection.
        if !blocked {
            if let Some(due) = next_due {
                wake = wake.min(due);
            }
        }
        if sent_any {
            // A connection that had nothing in flight now has a deadline too.
            wake = wake.min(now + config.request_timeout);
        }
        if reconnecting || no_connection {
            wake = wake.min(now + Duration::from_millis(20));
        }
        let timeout = wake.saturating_duration_since(Instant::now());
        let ready_count = match epoll.wait(Some(timeout)) {
            Ok(n) => n,
            Err(e) => {
                return LoopOutcome {
                    unsent: 0,
                    failure: Some(format!("epoll_wait: {e}")),
                }
            }
        };
        let now = Instant::now();
        for k in 0..ready_count {
            let ready = epoll.ready(k);
            let i = ready.token as usize;
            let Some(conn) = conns.conns.get_mut(i) else {
                continue;
            };
            if ready.writable() {
                flush(&epoll, i, conn, now, &mut completed);
            }
            if ready.readable() && conn.read(now, &mut completed).is_err() {
                conn.fail(now, &mut completed);
            }
        }
        record(io, phase.measure_start, &mut completed);
    }
    let unsent = match (interval_nanos, phase.count) {
        (Some(_), Some(count)) if cursor < count => (count - cursor).div_ceil(phase.threads),
        _ => 0,
    };
    LoopOutcome {
        unsent,
        failure: None,
    }
}

fn record(io: &LoopIo, measure_start: Instant, completed: &mut Vec<Completion>) {
    if completed.is_empty() {
        return;
    }
    if let Ok(mut r) = io.recorder.lock() {
        for c in completed.iter() {
            r.record(c, measure_start);
        }
    }
    completed.clear();
}

/// Writes a connection's queued requests, asking epoll for writability while the socket is full.
fn flush(epoll: &Epoll, i: usize, conn: &mut Conn, now: Instant, completed: &mut Vec<Completion>) {
    match conn.flush() {
        Ok(done) => {
            if done != conn.wants_writable {
                // already asking epoll for exactly what this state needs
                return;
            }
            conn.wants_writable = !done;
            let interest = if done {
                poll::READABLE
            } else {
                poll::READABLE | poll::WRITABLE
            };
            if let Some(s) = &conn.stream {
                let _ = epoll.modify(s.as_raw_fd(), i as u64, interest);
            }
        }
        Err(_) => conn.fail(now, completed),
    }
}

/// Reconnects a broken connection in the background, so that a slow or stopped node never holds up
/// the thread's schedule.
fn maintain(
    config: &WireConfig,
    epoll: &Epoll,
    i: usize,
    conn: &mut Conn,
    ids: &Ids,
    now: Instant,
) {
    if conn.reconnect.as_ref().is_some_and(JoinHandle::is_finished) {
        let result = conn.reconnect.take().map(JoinHandle::join);
        match result {
            Some(Ok(Ok((stream, got)))) if &got == ids => {
                if epoll
                    .add(stream.as_raw_fd(), i as u64, poll::READABLE)
                    .is_ok()
                {
                    conn.stream = Some(stream);
                    conn.retry_at = None;
                    return;
                }
                conn.retry_at = Some(now + RECONNECT_EVERY);
            }
            _ => conn.retry_at = Some(now + RECONNECT_EVERY),
        }
    }
    if conn.reconnect.is_none() && conn.retry_at.is_some_and(|t| now >= t) {
        let addr = config.topology.nodes[conn.node];
        let config = config.clone();
        conn.retry_at = None;
        conn.reconnect = Some(std::thread::spawn(move || open(addr, &config)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_share_the_release_time_of_their_first_operation() {
        let claim = AtomicU64::new(0);
        let start = Instant::now();
        let phase = Phase {
            base: 0,
            count: None,
            rate: Some(1e6),
            start,
            deadline: None,
            drain_deadline: None,
            measure_start: start,
            concurrency: 10,
            threads: 2,
            group: 3,
        };
        let schedule = Schedule {
            phase: &phase,
            thread: 1,
            claim: &claim,
        };
        let at = |relative: u64| {
            schedule
                .release_time(relative, 1000.0)
                .duration_since(start)
                .as_nanos()
        };
        // Thread 1 of 2 owns 1, 3, 5 (one group, due with 1), then 7, 9, 11 (due with 7).
        assert_eq!([at(1), at(3), at(5)], [1000, 1000, 1000]);
        assert_eq!([at(7), at(9), at(11)], [7000, 7000, 7000]);
        assert_eq!(at(13), 13_000);
        // Groups of one: every operation at its own time.
        let ungrouped = Phase { group: 1, ..phase };
        let single = Schedule {
            phase: &ungrouped,
            ..schedule
        };
        assert_eq!(
            single
                .release_time(3, 1000.0)
                .duration_since(start)
                .as_nanos(),
            3000
        );
        assert_eq!(
            single
                .release_time(5, 1000.0)
                .duration_since(start)
                .as_nanos(),
            5000
        );
    }
}
