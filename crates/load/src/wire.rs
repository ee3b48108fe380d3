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
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cqlbench_cql::{
    self as cql, classify_error, error_code, parse_header, parse_prepared, replace_execute_id,
    rows_page, write_prepare, ConnectOptions, ErrorClass, ExecuteFrame, Opcode, ServerError,
    Stream, HEADER_LEN, MAX_STREAMS,
};

use crate::poll::{self, Epoll, WakeTimer};
use crate::recorder::{Completion, ErrorKind, IntervalRecorder, NO_NODE};
use crate::state::{StateTable, StateUpdate};
use crate::topology::{token_of, Topology};
use crate::workload::OpId;
use cqlbench_workload::Paging;

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
    /// CQL of the statements, by [`OpId::index`].
    pub statements: Vec<String>,
    /// Which statements are conditional (LWT), whose `[applied]` is read from the answer.
    pub conditional: Vec<bool>,
    /// (consistency, serial consistency) protocol codes, by [`OpId::index`].
    pub levels: Vec<(u16, u16)>,
    pub request_timeout: Duration,
    /// Values kept per key between operations (a workload file's `state`), set as operations
    /// succeed.
    pub state: Option<Arc<StateTable>>,
    /// Operations that read their result in pages, by [`OpId::index`].
    pub paging: Vec<Option<Paging>>,
    /// The server's message of each operation's first failure, for the result to say why.
    pub first_errors: Arc<FirstErrors>,
}

/// The first error message the server gave for each operation (by [`OpId::index`]), kept once:
/// only the first failure of an operation decodes its message.
#[derive(Debug, Default)]
pub struct FirstErrors(Vec<std::sync::OnceLock<String>>);

impl FirstErrors {
    pub fn new(ops: usize) -> FirstErrors {
        FirstErrors((0..ops).map(|_| std::sync::OnceLock::new()).collect())
    }

    fn wants(&self, op: OpId) -> bool {
        self.0.get(op.index()).is_some_and(|m| m.get().is_none())
    }

    fn note(&self, op: OpId, message: String) {
        if let Some(slot) = self.0.get(op.index()) {
            let _ = slot.set(message.replace(['\n', '\r'], " "));
        }
    }

    /// Operation `op`'s first message, if it failed at the server.
    pub fn of(&self, op: usize) -> Option<&str> {
        self.0.get(op)?.get().map(String::as_str)
    }
}

impl WireConfig {
    /// Whether `pending`, just answered with a page that has a next one, asks for it.
    fn wants_next_page(&self, pending: &Pending) -> bool {
        match self.paging.get(pending.op.index()).copied().flatten() {
            Some(paging) => paging.max_pages.is_none_or(|max| pending.pages + 1 < max),
            None => false,
        }
    }
}

/// Prepared statement ids, by [`OpId::index`].
type Ids = Vec<Vec<u8>>;

/// Opens and prepares one connection (blocking), then switches it to non-blocking mode.
fn open(addr: SocketAddr, config: &WireConfig) -> Result<(Stream, Ids), cql::CqlError> {
    let mut stream = cql::connect(addr, &config.connect)?;
    let ids = config
        .statements
        .iter()
        .map(|cql| cql::prepare(&mut stream, cql).map(|prepared| prepared.id))
        .collect::<Result<Ids, _>>()?;
    stream.set_nonblocking(true)?;
    Ok((stream, ids))
}

/// What binding an operation gives: the partition key's bytes in the frame (for routing) and the
/// state it sets if it succeeds.
pub type Binding = (Range<usize>, Option<StateUpdate>);

/// An operation waiting for its response.
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    pub op: OpId,
    pub intended: Option<Instant>,
    pub sent: Instant,
    /// A reply after this is a timeout, however it reads.
    pub deadline: Instant,
    pub slot_limited: bool,
    /// Times re-sent after an UNPREPARED answer. A server may forget a statement again right after
    /// it was prepared anew (a schema change evicts the statements of its table after the new table
    /// is visible, so a PREPARE in between is evicted too); after [`MAX_REPREPARES`] it fails.
    pub reprepares: u8,
    /// The key's state to set when the operation succeeds (and is applied).
    pub state: Option<StateUpdate>,
    /// Rows the answers so far returned.
    pub rows: u32,
    /// Pages received so far (an operation that reads in pages).
    pub pages: u32,
}

/// Re-prepares of one operation before an UNPREPARED answer fails it (a bound, so that a server that
/// never keeps the statement cannot hold an operation forever).
pub const MAX_REPREPARES: u8 = 3;

impl Pending {
    fn complete(self, done: Instant, error: Option<ErrorKind>, node: u16) -> Completion {
        Completion {
            node,
            op: self.op,
            intended: self.intended.unwrap_or(self.sent),
            sent: self.sent,
            done,
            error,
            slot_limited: self.slot_limited,
            not_applied: false,
            rows: self.rows,
            pages: self.pages,
        }
    }

    /// With one more answer of `rows` rows counted (a page when the operation reads in pages).
    fn answered(self, rows: u32, paged: bool) -> Pending {
        Pending {
            rows: self.rows.saturating_add(rows),
            pages: self.pages + u32::from(paged),
            ..self
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum SlotState {
    Free,
    Busy(Pending),
    /// A PREPARE of this operation type's statement, sent after the server forgot it.
    Preparing(OpId),
    /// Timed out (already recorded); the stream id stays taken until the late answer arrives.
    Orphan,
}

#[derive(Debug, Clone)]
struct Slot {
    generation: u32,
    state: SlotState,
    /// The request as sent, kept for a re-send after a re-prepare (the buffer is reused).
    request: Vec<u8>,
}

type Reconnect = JoinHandle<Result<(Stream, Ids), cql::CqlError>>;

/// One connection of one thread.
struct Conn {
    node: usize,
    stream: Option<Stream>,
    /// The prepared ids this connection's node knows the statements by.
    ids: Ids,
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
    /// Per operation type: operations (stream id, slot generation) waiting for a re-prepare.
    awaiting_prepare: Vec<Vec<(u16, u32)>>,
    /// Operations re-sent after a re-prepare, not yet handed to the recorder.
    reprepared: u64,
    reconnect: Option<Reconnect>,
    retry_at: Option<Instant>,
    /// The paging state of the page just read, and the request for the next (buffers reused).
    page_state: Vec<u8>,
    page_request: Vec<u8>,
}

impl Conn {
    /// A connection to `node` for a workload of `ops` operations (`opened`: `None` while it is down).
    fn new(node: usize, ops: usize, opened: Option<(Stream, Ids)>) -> Conn {
        let stream_is_down = opened.is_none();
        let (stream, ids) = match opened {
            Some((stream, ids)) => (Some(stream), ids),
            None => (None, vec![Vec::new(); ops]),
        };
        Conn {
            node,
            stream,
            ids,
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
            awaiting_prepare: vec![Vec::new(); ops],
            reprepared: 0,
            reconnect: None,
            retry_at: stream_is_down.then(Instant::now),
            page_state: Vec::new(),
            page_request: Vec::new(),
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
                request: Vec::new(),
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
    fn start(&mut self, frame: &[u8], pending: Pending) -> bool {
        let Some(id) = self.take_slot() else {
            return false;
        };
        let slot = &mut self.slots[id as usize];
        slot.request.clear();
        slot.request.extend_from_slice(frame);
        slot.request[2..4].copy_from_slice(&(id as i16).to_be_bytes());
        slot.state = SlotState::Busy(pending);
        self.out.extend_from_slice(&slot.request);
        self.deadlines
            .push_back((pending.deadline, id, slot.generation));
        self.live += 1;
        true
    }

    /// The server answered that it does not know `op`'s prepared statement: keep the operation
    /// waiting (its deadline still runs) and prepare the statement again on this connection, once
    /// however many operations are waiting.
    fn await_prepare(
        &mut self,
        id: u16,
        op: OpId,
        statements: &[String],
        completed: &mut Vec<Completion>,
    ) {
        let generation = self.slots[id as usize].generation;
        let waiting = &mut self.awaiting_prepare[op.index()];
        waiting.push((id, generation));
        if waiting.len() > 1 {
            return; // a PREPARE is already on its way
        }
        match self.take_slot() {
            Some(prepare) => {
                self.slots[prepare as usize].state = SlotState::Preparing(op);
                write_prepare(&mut self.out, prepare as i16, &statements[op.index()]);
            }
            None => self.fail_awaiting(op, Instant::now(), completed),
        }
    }

    /// The statement is prepared again (under `prepared`): re-send the waiting operations under their
    /// own stream ids, which stayed taken.
    fn resend_awaiting(&mut self, op: OpId, prepared: Vec<u8>) {
        self.ids[op.index()] = prepared;
        for (id, generation) in std::mem::take(&mut self.awaiting_prepare[op.index()]) {
            let slot = &mut self.slots[id as usize];
            if slot.generation != generation {
                continue;
            }
            match slot.state {
                SlotState::Busy(mut pending) => {
                    pending.reprepares += 1;
                    slot.state = SlotState::Busy(pending);
                    replace_execute_id(&mut slot.request, &self.ids[op.index()]);
                    self.out.extend_from_slice(&slot.request);
                    self.reprepared += 1;
                }
                // Timed out while waiting: no answer will come for it any more.
                SlotState::Orphan => self.release(id),
                SlotState::Free | SlotState::Preparing(_) => {}
            }
        }
    }

    /// The re-prepare failed: the operations waiting for it fail now.
    fn fail_awaiting(&mut self, op: OpId, now: Instant, completed: &mut Vec<Completion>) {
        for (id, generation) in std::mem::take(&mut self.awaiting_prepare[op.index()]) {
            let slot = &self.slots[id as usize];
            if slot.generation != generation {
                continue;
            }
            match slot.state {
                SlotState::Busy(pending) => {
                    completed.push(pending.complete(now, Some(ErrorKind::Other), self.node as u16));
                    self.live -= 1;
                    self.release(id);
                }
                SlotState::Orphan => self.release(id),
                SlotState::Free | SlotState::Preparing(_) => {}
            }
        }
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
    fn read(
        &mut self,
        now: Instant,
        config: &WireConfig,
        completed: &mut Vec<Completion>,
    ) -> io::Result<()> {
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
                    self.parse(now, config, completed)?;
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

    fn parse(
        &mut self,
        now: Instant,
        config: &WireConfig,
        completed: &mut Vec<Completion>,
    ) -> io::Result<()> {
        let (statements, conditional) = (&config.statements, &config.conditional);
        let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
        while let Some(header) = parse_header(&self.inbuf[self.in_start..self.in_end]) {
            if !header.is_response() || header.length > MAX_FRAME {
                return Err(bad(format!("unexpected frame header {header:?}")));
            }
            if self.in_end - self.in_start < header.frame_len() {
                break;
            }
            let body = &self.inbuf[self.in_start + HEADER_LEN..self.in_start + header.frame_len()];
            let is_error = header.opcode == Opcode::Error as u8;
            let outcome = is_error
                .then(|| error_code(header.flags, body).map_or(ErrorClass::Other, classify_error));
            let id = header.stream;
            let state = (id >= 0)
                .then(|| self.slots.get(id as usize).map(|slot| slot.state))
                .flatten();
            // A re-prepare's answer carries the statement's new id.
            let prepared = match state {
                Some(SlotState::Preparing(_)) if !is_error => {
                    Some(parse_prepared(header.flags, body).map(|p| p.id))
                }
                _ => None,
            };
            // An answer's rows are read once: their count, a conditional write's `[applied]`,
            // and the state of the next page.
            let page = match state {
                Some(SlotState::Busy(_)) if !is_error => rows_page(header.flags, body),
                _ => None,
            };
            let not_applied = match (state, &page) {
                (Some(SlotState::Busy(p)), Some(page)) if conditional[p.op.index()] => {
                    page.applied(body) == Some(false)
                }
                _ => false,
            };
            let message = match (outcome, state) {
                (Some(class), Some(SlotState::Busy(p)))
                    if class != ErrorClass::Unprepared && config.first_errors.wants(p.op) =>
                {
                    ServerError::decode(header.flags, body).map(|e| (p.op, e.message))
                }
                _ => None,
            };
            if let Some((op, message)) = message {
                config.first_errors.note(op, message);
            }
            let rows = page.as_ref().map_or(0, |p| p.rows);
            let next_page = match (page.and_then(|p| p.paging_state), state) {
                (Some(at), Some(SlotState::Busy(p))) if config.wants_next_page(&p) => {
                    self.page_state.clear();
                    self.page_state.extend_from_slice(&body[at]);
                    true
                }
                _ => false,
            };
            self.in_start += header.frame_len();
            let Some(state) = state else {
                continue; // events, or nothing of ours
            };
            let id = id as u16;
            match state {
                SlotState::Busy(pending) => {
                    if outcome == Some(ErrorClass::Unprepared)
                        && pending.reprepares < MAX_REPREPARES
                    {
                        self.await_prepare(id, pending.op, statements, completed);
                        continue;
                    }
                    let paged = config.paging[pending.op.index()].is_some();
                    let pending = pending.answered(rows, paged);
                    if next_page
                        && now <= pending.deadline
                        && self.request_next_page(id, pending, now + config.request_timeout)
                    {
                        continue;
                    }
                    let completion = if now > pending.deadline {
                        // The answer came after the timeout: the user saw a timeout.
                        pending.complete(
                            pending.deadline,
                            Some(ErrorKind::Timeout),
                            self.node as u16,
                        )
                    } else {
                        if let (None, false, Some(update), Some(table)) =
                            (outcome, not_applied, pending.state, &config.state)
                        {
                            table.set(update);
                        }
                        Completion {
                            not_applied,
                            ..pending.complete(now, outcome.map(error_kind), self.node as u16)
                        }
                    };
                    completed.push(completion);
                    self.live -= 1;
                    self.release(id);
                }
                SlotState::Preparing(op) => {
                    self.release(id);
                    match prepared {
                        Some(Ok(prepared)) => self.resend_awaiting(op, prepared),
                        _ => self.fail_awaiting(op, now, completed),
                    }
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

    /// Sends the request for the page after the one `pending` just received, under the same
    /// stream id, with a deadline of its own (`false` if the request asks for no pages).
    fn request_next_page(&mut self, id: u16, pending: Pending, deadline: Instant) -> bool {
        let slot = &mut self.slots[id as usize];
        if cql::with_paging_state(&slot.request, &self.page_state, &mut self.page_request).is_none()
        {
            return false;
        }
        std::mem::swap(&mut slot.request, &mut self.page_request);
        // The previous page's deadline entry no longer matches the slot.
        slot.generation = slot.generation.wrapping_add(1);
        slot.state = SlotState::Busy(Pending {
            deadline,
            ..pending
        });
        self.out.extend_from_slice(&slot.request);
        self.deadlines.push_back((deadline, id, slot.generation));
        true
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
            completed.push(pending.complete(deadline, Some(ErrorKind::Timeout), self.node as u16));
            slot.state = SlotState::Orphan;
            self.live -= 1;
        }
        None
    }

    /// Drops a broken connection: its unanswered operations fail at `now`; a reconnect follows.
    fn fail(&mut self, now: Instant, completed: &mut Vec<Completion>) {
        for slot in &self.slots {
            if let SlotState::Busy(p) = slot.state {
                completed.push(p.complete(now, Some(ErrorKind::Other), self.node as u16));
            }
        }
        self.awaiting_prepare.iter_mut().for_each(Vec::clear);
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
        self.retry_at = Some(now);
    }
}

fn error_kind(class: ErrorClass) -> ErrorKind {
    match class {
        ErrorClass::Timeout => ErrorKind::Timeout,
        ErrorClass::Unavailable => ErrorKind::Unavailable,
        ErrorClass::Overloaded => ErrorKind::Overloaded,
        ErrorClass::Unprepared | ErrorClass::Other => ErrorKind::Other,
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
        let ops = config.statements.len();
        let mut conns = Vec::new();
        let mut ids: Option<Ids> = None;
        let mut last_error = None;
        for (node, addr) in config.topology.nodes.iter().enumerate() {
            for _ in 0..per_node {
                match open(*addr, config) {
                    // Cassandra and ScyllaDB derive a prepared id from the statement and keyspace,
                    // so nodes normally agree; each connection keeps its own ids all the same.
                    Ok((stream, got)) => {
                        ids.get_or_insert_with(|| got.clone());
                        conns.push(Conn::new(node, ops, Some((stream, got))));
                    }
                    Err(e) => {
                        last_error = Some(e);
                        conns.push(Conn::new(node, ops, None));
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
        bind: impl FnOnce(&mut ExecuteFrame) -> Binding,
    ) -> bool {
        let mut pending = pending;
        let mut frame = std::mem::take(&mut self.frame);
        frame.clear();
        let mut execute = ExecuteFrame::begin(
            &mut frame,
            0,
            &self.ids[pending.op.index()],
            config.levels[pending.op.index()].0,
            config.levels[pending.op.index()].1,
        );
        let (key, state) = bind(&mut execute);
        pending.state = state;
        if let Some(paging) = config.paging[pending.op.index()] {
            execute.page_size(paging.page_size.min(i32::MAX as u32) as i32);
        }
        execute.finish();
        let sent = match self.route(&config.topology, &frame[key]) {
            Some(i) => {
                let conn = &mut self.conns[i];
                let id = &conn.ids[pending.op.index()];
                if *id != self.ids[pending.op.index()] {
                    replace_execute_id(&mut frame, id);
                }
                conn.start(&frame, pending)
            }
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
    /// Operations per second over all threads of all clients (the global schedule); `None` =
    /// unthrottled.
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
    /// This client's threads.
    pub threads: u64,
    /// A thread's consecutive operations released together (see `RunOptions::release_group`).
    pub group: u64,
    /// Load clients (separate processes) sharing the schedule (`--clients`), and this one's number
    /// (`--client-id`): the client takes the relative operation numbers `r` with
    /// `r % clients == client_id`, so that the clients together send exactly one client's schedule.
    pub clients: u64,
    pub client_id: u64,
}

impl Phase {
    /// Relative operation numbers between two consecutive ones of one thread: every thread of every
    /// client is one lane of the schedule.
    pub fn stride(&self) -> u64 {
        self.threads * self.clients
    }

    /// The lane of this client's `thread`: its first relative operation number.
    pub fn lane(&self, thread: u64) -> u64 {
        self.client_id + self.clients * thread
    }

    /// This client's operations among the phase's first `count` (over all clients).
    pub fn own_count(&self, count: u64) -> u64 {
        count.saturating_sub(self.client_id).div_ceil(self.clients)
    }
}

/// One thread's share of a phase: a fixed-rate schedule or as fast as slots allow.
pub struct Schedule<'a> {
    pub phase: &'a Phase,
    /// The thread's lane ([`Phase::lane`]): with a rate it sends the relative operation numbers
    /// `lane, lane + stride, lane + 2 stride, …`.
    pub lane: u64,
    /// Unthrottled threads claim operation numbers from this counter, shared by the client's threads;
    /// claim `n` is the client's relative operation `client_id + clients × n`.
    pub claim: &'a AtomicU64,
}

impl Schedule<'_> {
    /// When operation `relative` (one of this thread's) is released: operations go out in groups of
    /// `group` consecutive ones of the thread, all at the time the first of the group is due.
    pub fn release_time(&self, relative: u64, interval_nanos: f64) -> Instant {
        let (stride, group) = (self.phase.stride(), self.phase.group);
        let own = (relative - self.lane) / stride;
        let first = self.lane + (own - own % group) * stride;
        self.phase.start + Duration::from_nanos((first as f64 * interval_nanos) as u64)
    }
}

/// What a thread's loop needs from the engine.
pub struct LoopIo<'a> {
    pub stop: &'a AtomicBool,
    pub recorder: &'a Mutex<IntervalRecorder>,
    /// Rate mode: the relative number of this thread's next operation not yet released, kept up to
    /// date so that the thread's unsent share can be accounted even if the loop dies.
    pub progress: &'a AtomicU64,
    /// Test hook (fault injection): panic after releasing this many operations.
    pub panic_after: Option<u64>,
}

impl LoopIo<'_> {
    /// The recorder, also after a panic poisoned its lock (its counts are still whole: every update
    /// under the lock is a plain addition).
    fn recorder(&self) -> std::sync::MutexGuard<'_, IntervalRecorder> {
        self.recorder.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// How a thread's loop ended.
#[derive(Debug, Default)]
pub struct LoopOutcome {
    /// Scheduled operations that were due but never sent (the phase was stopped or the server fell
    /// too far behind); each is also recorded as a failure of kind `unsent`.
    pub unsent: u64,
    /// Scheduled operations not yet due when the run was stopped (not part of the result).
    pub cancelled: u64,
    /// A failure of the loop itself (not of operations), e.g. epoll could not be set up.
    pub failure: Option<String>,
}

/// What the loop counts between two hand-overs to the recorder (taken under one lock).
struct Tally {
    /// Released operations by [phase (0 warm-up, 1 measured)][operation].
    released: [Vec<u64>; 2],
    /// When they were released (one pass releases at one moment).
    released_at: Option<Instant>,
    concurrency_limited: u64,
    send_gaps: Vec<u64>,
    release_lateness: Vec<u64>,
}

impl Tally {
    fn new(ops: usize) -> Tally {
        Tally {
            released: [vec![0; ops], vec![0; ops]],
            released_at: None,
            concurrency_limited: 0,
            send_gaps: Vec::new(),
            release_lateness: Vec::new(),
        }
    }
}

/// The next operation of a thread's share, as the schedule has it now.
enum Next {
    /// Release the operation with this relative number, intended at this time (`None`: unthrottled).
    Release(u64, Option<Instant>),
    /// Nothing is due before this time.
    Due(Instant),
    /// The thread's share is done (all sent, the deadline passed, or the server fell too far behind).
    Exhausted,
}

/// What one pass of releasing due operations did.
#[derive(Default)]
struct Released {
    /// When the next operation is due (when the pass stopped for that reason).
    next_due: Option<Instant>,
    /// Unthrottled and no node reachable: wait for a reconnection.
    no_connection: bool,
    sent_any: bool,
    /// When the first operation this pass sent was due (rate mode).
    first_due: Option<Instant>,
}

/// One client thread's loop over its share of a phase: releases what is due, reads responses and
/// completes operations, with the connections it owns.
struct ThreadLoop<'a, T, B> {
    config: &'a WireConfig,
    conns: &'a mut ThreadConns,
    schedule: &'a Schedule<'a>,
    io: &'a LoopIo<'a>,
    op_type: T,
    bind: B,
    epoll: Epoll,
    /// What the loop sleeps until when no socket wakes it first.
    timer: WakeTimer,
    /// The next look at the stop flag. It moves only once passed, so that a loop woken by responses
    /// between two due times asks for the same wake-up time and its timer stays as it is.
    stop_poll_at: Instant,
    completed: Vec<Completion>,
    tally: Tally,
    last_release: Option<Instant>,
    released_total: u64,
    /// Rate mode: relative number (within the phase, over all threads) of this thread's next operation.
    cursor: u64,
    /// Unthrottled: the operation number claimed and not yet released.
    claimed: Option<u64>,
    exhausted: bool,
    /// Every in-flight slot was taken when an operation was due.
    blocked: bool,
}

impl<T, B> ThreadLoop<'_, T, B>
where
    T: Fn(u64) -> OpId,
    B: FnMut(u64, OpId, &mut ExecuteFrame) -> Binding,
{
    /// Whether the schedule has an operation to release now.
    fn next(&mut self, now: Instant, interval_nanos: Option<f64>) -> Next {
        let phase = self.schedule.phase;
        match interval_nanos {
            Some(nanos) => {
                if phase.count.is_some_and(|c| self.cursor >= c) {
                    return Next::Exhausted;
                }
                let due = self.schedule.release_time(self.cursor, nanos);
                if due > now {
                    return Next::Due(due);
                }
                if phase.drain_deadline.is_some_and(|d| now > d) {
                    return Next::Exhausted;
                }
                Next::Release(self.cursor, Some(due))
            }
            None => {
                if now < phase.start {
                    return Next::Due(phase.start); // the phase starts with all threads
                }
                if phase.deadline.is_some_and(|d| now >= d) {
                    return Next::Exhausted;
                }
                let claim = self.schedule.claim;
                let n = *self.claimed.get_or_insert_with(|| {
                    phase.client_id + phase.clients * claim.fetch_add(1, Ordering::Relaxed)
                });
                if phase.count.is_some_and(|c| n >= c) {
                    return Next::Exhausted;
                }
                Next::Release(n, None)
            }
        }
    }

    /// Sends operation `relative`; `false` when no node could take it and it must wait
    /// (unthrottled), else it was sent or failed at once.
    fn release(
        &mut self,
        now: Instant,
        relative: u64,
        intended: Option<Instant>,
        was_blocked: bool,
    ) -> Result<bool, ()> {
        let phase = self.schedule.phase;
        let index = phase.base + relative;
        let op = (self.op_type)(index);
        let slot_limited = was_blocked && intended.is_some_and(|due| now > due);
        let pending = Pending {
            op,
            intended,
            sent: now,
            deadline: now + self.config.request_timeout,
            slot_limited,
            reprepares: 0,
            state: None,
            rows: 0,
            pages: 0,
        };
        self.tally.concurrency_limited += u64::from(slot_limited);
        let bind = &mut self.bind;
        let sent = self
            .conns
            .send(self.config, pending, |f| bind(index, op, f));
        if !sent {
            if intended.is_none() {
                // Unthrottled: no node is reachable; wait for a reconnection rather than turning
                // the operation budget into errors at full speed.
                return Err(());
            }
            self.completed
                .push(pending.complete(now, Some(ErrorKind::Other), NO_NODE));
        }
        let measured = intended.unwrap_or(now) >= phase.measure_start;
        self.tally.released[usize::from(measured)][op.index()] += 1;
        self.tally.released_at = Some(now);
        self.released_total += 1;
        match intended {
            Some(_) => {
                self.cursor += phase.stride();
                self.io.progress.store(self.cursor, Ordering::Relaxed);
            }
            None => self.claimed = None,
        }
        if self
            .io
            .panic_after
            .is_some_and(|n| self.released_total >= n)
        {
            panic!(
                "fault injected by CQLBENCH_FAULT_PANIC_THREAD after {} operations",
                self.released_total
            );
        }
        Ok(sent)
    }

    /// Releases every operation due by `now`, as far as the in-flight slots allow.
    fn release_due(&mut self, now: Instant, interval_nanos: Option<f64>) -> Released {
        let mut done = Released::default();
        let was_blocked = self.blocked;
        self.blocked = false;
        loop {
            let (relative, intended) = match self.next(now, interval_nanos) {
                Next::Release(relative, intended) => (relative, intended),
                Next::Due(due) => {
                    done.next_due = Some(due);
                    break;
                }
                Next::Exhausted => {
                    self.exhausted = true;
                    break;
                }
            };
            if self.conns.live() >= self.schedule.phase.concurrency {
                self.blocked = true;
                break;
            }
            match self.release(now, relative, intended, was_blocked) {
                Ok(sent) => {
                    if sent && !done.sent_any {
                        done.first_due = intended;
                    }
                    done.sent_any |= sent;
                }
                Err(()) => {
                    done.no_connection = true;
                    break;
                }
            }
        }
        done
    }

    /// Failed connections reconnected, timed-out requests completed (freeing their slots before
    /// sending); returns the earliest remaining deadline (or the next look at the stop flag) and
    /// whether a connection is still being re-established.
    fn maintain_connections(&mut self, now: Instant) -> (Instant, bool) {
        if now >= self.stop_poll_at {
            self.stop_poll_at = now + STOP_POLL;
        }
        let mut wake = self.stop_poll_at;
        let mut reconnecting = false;
        for (i, conn) in self.conns.conns.iter_mut().enumerate() {
            if !conn.is_up() {
                maintain(self.config, &self.epoll, i, conn, now);
                reconnecting |= !conn.is_up();
            }
            if let Some(deadline) = conn.expire(now, &mut self.completed) {
                wake = wake.min(deadline);
            }
        }
        (wake, reconnecting)
    }

    /// Writes what the connections have buffered, then hands the measurements to the recorder.
    fn flush_and_record(&mut self, now: Instant, recorder: &mut IntervalRecorder) {
        for (i, conn) in self.conns.conns.iter_mut().enumerate() {
            if conn.out.len() > conn.out_at {
                flush(&self.epoll, i, conn, now, &mut self.completed);
            }
        }
        self.record_into(recorder);
    }

    fn record(&mut self) {
        let io = self.io;
        self.record_into(&mut io.recorder());
    }

    fn record_into(&mut self, recorder: &mut IntervalRecorder) {
        let measure_start = self.schedule.phase.measure_start;
        record(
            recorder,
            measure_start,
            self.conns,
            &mut self.completed,
            &mut self.tally,
        );
    }

    /// Sleeps until `wake` or until a connection is ready, then reads and writes what is ready.
    fn wait(&mut self, wake: Instant) -> Result<(), String> {
        let ready_count = self
            .epoll
            .wait_until(&mut self.timer, wake)
            .map_err(|e| format!("epoll_wait: {e}"))?;
        let now = Instant::now();
        for k in 0..ready_count {
            let ready = self.epoll.ready(k);
            // The wake-up timer's report (poll::TIMER_TOKEN) names no connection.
            let i = ready.token as usize;
            let Some(conn) = self.conns.conns.get_mut(i) else {
                continue;
            };
            if ready.writable() {
                flush(&self.epoll, i, conn, now, &mut self.completed);
            }
            if ready.readable() && conn.read(now, self.config, &mut self.completed).is_err() {
                conn.fail(now, &mut self.completed);
            }
        }
        self.record();
        Ok(())
    }

    /// The loop: until the share is done (or the run stopped) and nothing is in flight.
    fn run(&mut self) -> Result<(), String> {
        let interval_nanos = self.schedule.phase.rate.map(|rate| 1e9 / rate);
        loop {
            let (mut wake, reconnecting) = self.maintain_connections(Instant::now());
            let stopping = self.io.stop.load(Ordering::Relaxed);
            // Held from the moment of the releases (taken under it) until they are recorded: the
            // reporter takes a row's end while it holds every recorder, so a release falls in the
            // row of its moment, never in the next one for a preemption in between.
            let io = self.io;
            let mut recorder = io.recorder();
            let now = Instant::now();
            let mut released = Released::default();
            if !stopping && !self.exhausted {
                released = self.release_due(now, interval_nanos);
            }
            if let (true, Some(due)) = (released.sent_any, released.first_due) {
                self.tally.release_lateness.push(micros_between(due, now));
                if let Some(previous) = self.last_release.replace(now) {
                    self.tally.send_gaps.push(micros_between(previous, now));
                }
            }
            self.flush_and_record(now, &mut recorder);
            drop(recorder);
            if (self.exhausted || stopping) && self.conns.live() == 0 {
                return Ok(());
            }
            // Sleep until the next operation is due, a response arrives, a request times out, or
            // it is time to look at the stop flag or a reconnection.
            if let (false, Some(due)) = (self.blocked, released.next_due) {
                wake = wake.min(due);
            }
            if released.sent_any {
                // A connection that had nothing in flight now has a deadline too.
                wake = wake.min(now + self.config.request_timeout);
            }
            if reconnecting || released.no_connection {
                wake = wake.min(now + Duration::from_millis(20));
            }
            self.wait(wake)?;
        }
    }
}

/// Runs one thread's share of a phase to its end. `op_type` names the operation type of an index;
/// `bind` writes an operation's bound values.
pub fn run_loop(
    config: &WireConfig,
    conns: &mut ThreadConns,
    schedule: &Schedule,
    io: &LoopIo,
    op_type: impl Fn(u64) -> OpId,
    bind: impl FnMut(u64, OpId, &mut ExecuteFrame) -> Binding,
) -> LoopOutcome {
    io.progress.store(schedule.lane, Ordering::Relaxed);
    let (epoll, timer) = match Epoll::new().and_then(|e| WakeTimer::new(&e).map(|t| (e, t))) {
        Ok(pair) => pair,
        Err(e) => {
            let mut outcome = give_up(conns, schedule, io, &op_type, Instant::now());
            outcome.failure = Some(format!("epoll: {e}"));
            return outcome;
        }
    };
    // The kernel may wake this thread up to 10 µs after a timer it sleeps on (50 µs by default); the
    // wake-up timer itself has no slack.
    poll::set_timer_slack(Duration::from_micros(10));
    for (i, conn) in conns.conns.iter_mut().enumerate() {
        conn.wants_writable = false;
        if let Some(s) = &conn.stream {
            let _ = epoll.add(s.as_raw_fd(), i as u64, poll::READABLE);
        }
    }
    let mut thread = ThreadLoop {
        config,
        conns,
        schedule,
        io,
        op_type,
        bind,
        epoll,
        timer,
        stop_poll_at: Instant::now() + STOP_POLL,
        completed: Vec::with_capacity(256),
        tally: Tally::new(config.statements.len()),
        last_release: None,
        released_total: 0,
        cursor: schedule.lane,
        claimed: None,
        exhausted: false,
        blocked: false,
    };
    if let Err(failure) = thread.run() {
        let ThreadLoop { conns, op_type, .. } = thread;
        let mut outcome = give_up(conns, schedule, io, &op_type, Instant::now());
        outcome.failure = Some(failure);
        return outcome;
    }
    account_unsent(schedule, io, &thread.op_type, Instant::now())
}

fn micros_between(from: Instant, to: Instant) -> u64 {
    to.saturating_duration_since(from).as_micros().max(1) as u64
}

/// Ends a loop that cannot go on (a panic, or epoll failing): the operations in flight fail now and
/// the thread's remaining due operations are accounted as unsent.
pub fn give_up(
    conns: &mut ThreadConns,
    schedule: &Schedule,
    io: &LoopIo,
    op_type: &impl Fn(u64) -> OpId,
    now: Instant,
) -> LoopOutcome {
    let mut completed = Vec::new();
    for conn in &mut conns.conns {
        conn.fail(now, &mut completed);
    }
    record(
        &mut io.recorder(),
        schedule.phase.measure_start,
        conns,
        &mut completed,
        &mut Tally::new(0),
    );
    account_unsent(schedule, io, op_type, now)
}

/// Records this thread's scheduled operations that were due by `now` but never sent as failures of
/// kind `unsent`, with the latency they had reached when the run gave up on them; the ones not yet
/// due are only counted (`cancelled`).
fn account_unsent(
    schedule: &Schedule,
    io: &LoopIo,
    op_type: &impl Fn(u64) -> OpId,
    now: Instant,
) -> LoopOutcome {
    let phase = schedule.phase;
    let (Some(rate), Some(count)) = (phase.rate, phase.count) else {
        return LoopOutcome::default();
    };
    let nanos = 1e9 / rate;
    let mut outcome = LoopOutcome::default();
    let mut cursor = io.progress.load(Ordering::Relaxed);
    let mut batch = Vec::with_capacity(4096);
    while cursor < count {
        let intended = schedule.release_time(cursor, nanos);
        if intended > now {
            outcome.cancelled += (count - cursor).div_ceil(phase.stride());
            break;
        }
        let op = op_type(phase.base + cursor);
        batch.push(Completion {
            op,
            intended,
            sent: now,
            done: now,
            error: Some(ErrorKind::Unsent),
            slot_limited: false,
            node: NO_NODE,
            not_applied: false,
            rows: 0,
            pages: 0,
        });
        outcome.unsent += 1;
        cursor += phase.stride();
        if batch.len() == batch.capacity() {
            record_completions(io, phase.measure_start, &mut batch);
        }
    }
    record_completions(io, phase.measure_start, &mut batch);
    io.progress.store(cursor, Ordering::Relaxed);
    outcome
}

fn record_completions(io: &LoopIo, measure_start: Instant, completed: &mut Vec<Completion>) {
    if completed.is_empty() {
        return;
    }
    let mut r = io.recorder();
    for c in completed.iter() {
        r.record(c, measure_start);
    }
    completed.clear();
}

/// Hands what the loop measured since the last call to the (locked) recorder.
fn record(
    r: &mut IntervalRecorder,
    measure_start: Instant,
    conns: &mut ThreadConns,
    completed: &mut Vec<Completion>,
    tally: &mut Tally,
) {
    let reprepared: u64 = conns
        .conns
        .iter_mut()
        .map(|c| std::mem::take(&mut c.reprepared))
        .sum();
    for c in completed.iter() {
        r.record(c, measure_start);
    }
    completed.clear();
    if let Some(at) = tally.released_at.take() {
        for (phase, by_op) in tally.released.iter_mut().enumerate() {
            for (op, n) in by_op.iter_mut().enumerate() {
                if *n > 0 {
                    r.record_release(at, phase == 1, op, std::mem::take(n));
                }
            }
        }
    }
    r.concurrency_limited += std::mem::take(&mut tally.concurrency_limited);
    r.reprepared += reprepared;
    for gap in tally.send_gaps.drain(..) {
        let _ = r.send_gaps.record(gap);
    }
    for lateness in tally.release_lateness.drain(..) {
        let _ = r.release_lateness.record(lateness);
    }
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
/// the thread's schedule. A node that comes back may know the statements under other ids: the
/// connection takes the ids it was given.
fn maintain(config: &WireConfig, epoll: &Epoll, i: usize, conn: &mut Conn, now: Instant) {
    if conn.reconnect.as_ref().is_some_and(JoinHandle::is_finished) {
        let result = conn.reconnect.take().map(JoinHandle::join);
        match result {
            Some(Ok(Ok((stream, ids)))) => {
                if epoll
                    .add(stream.as_raw_fd(), i as u64, poll::READABLE)
                    .is_ok()
                {
                    conn.stream = Some(stream);
                    conn.ids = ids;
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

    /// A server's answer on `stream`, as it lands in the connection's input buffer.
    fn arrive(conn: &mut Conn, stream: u16, opcode: Opcode, body: &[u8]) {
        let mut frame = Vec::new();
        cql::frame::write_frame(&mut frame, stream as i16, opcode, body);
        frame[0] = 0x84; // the response version
        conn.inbuf[conn.in_end..conn.in_end + frame.len()].copy_from_slice(&frame);
        conn.in_end += frame.len();
    }

    /// An EXECUTE of statement `id` with one bound value, as `ThreadConns::send` hands it over.
    fn execute(id: &[u8]) -> Vec<u8> {
        let mut frame = Vec::new();
        let mut execute = ExecuteFrame::begin(&mut frame, 0, id, 0x0001, 0x0008);
        execute.value(b"key");
        execute.finish();
        frame
    }

    /// RESULT Void: a write's answer.
    const VOID: [u8; 4] = 1i32.to_be_bytes();

    fn statements() -> Vec<String> {
        vec![
            "SELECT v FROM t WHERE k = ?".into(),
            "INSERT INTO t (k, v) VALUES (?, ?)".into(),
        ]
    }

    /// What `parse` reads beside the bytes: the statements, none of them conditional.
    fn config() -> WireConfig {
        WireConfig {
            topology: Topology::default(),
            connect: cql::ConnectOptions {
                timeout: Duration::from_secs(1),
                credentials: None,
                tls: None,
                keyspace: None,
            },
            statements: statements(),
            conditional: vec![false; 2],
            levels: vec![(1, 8); 2],
            request_timeout: Duration::from_secs(1),
            state: None,
            paging: vec![None; 2],
            first_errors: Arc::new(FirstErrors::new(2)),
        }
    }

    #[test]
    fn a_reply_read_after_the_deadline_is_a_timeout_at_the_deadline() {
        let t0 = Instant::now();
        let timeout = Duration::from_millis(500);
        let pending = Pending {
            op: OpId::WRITE,
            intended: Some(t0),
            sent: t0,
            deadline: t0 + timeout,
            slot_limited: false,
            reprepares: 0,
            state: None,
            rows: 0,
            pages: 0,
        };
        let mut conn = Conn::new(0, 2, None);
        for _ in 0..3 {
            assert!(conn.start(&execute(b"id"), pending));
        }
        let mut completed = Vec::new();
        // Stream 0 is answered at its deadline: in time, a success at that moment.
        arrive(&mut conn, 0, Opcode::Result, &VOID);
        conn.parse(t0 + timeout, &config(), &mut completed).unwrap();
        // Streams 1 and 2 are answered (a result, and an overloaded error) and read a microsecond
        // after their deadline, before the loop's expiry pass noticed it: the user saw a timeout.
        let late = t0 + timeout + Duration::from_micros(1);
        arrive(&mut conn, 1, Opcode::Result, &VOID);
        let mut overloaded = 0x1001i32.to_be_bytes().to_vec();
        cql::frame::put_string(&mut overloaded, "overloaded");
        arrive(&mut conn, 2, Opcode::Error, &overloaded);
        conn.parse(late, &config(), &mut completed).unwrap();
        let outcomes: Vec<_> = completed.iter().map(|c| (c.error, c.done)).collect();
        assert_eq!(
            outcomes,
            [
                (None, t0 + timeout),
                (Some(ErrorKind::Timeout), t0 + timeout),
                (Some(ErrorKind::Timeout), t0 + timeout),
            ]
        );
        assert_eq!(conn.live, 0);
        // Nothing is left for the expiry pass to count a second time.
        assert_eq!(conn.expire(late, &mut completed), None);
        assert_eq!(completed.len(), 3);
        // Recorded, the late answers are failures whose latency is the timeout; no successful
        // operation has a service time over the timeout.
        let mut recorder = IntervalRecorder::new(2);
        for c in &completed {
            recorder.record(c, t0);
        }
        let write = &recorder.measured[OpId::WRITE.index()];
        assert_eq!((write.count, write.errors.timeout), (1, 2));
        let timeout_us = timeout.as_micros() as u64;
        assert!(write.service.max() <= write.service.highest_equivalent(timeout_us));
        assert_eq!(
            write
                .failed_latency
                .lowest_equivalent(write.failed_latency.min()),
            write.failed_latency.lowest_equivalent(timeout_us)
        );
    }

    /// An ERROR body: UNPREPARED for the statement `id`.
    fn unprepared_error(id: &[u8]) -> Vec<u8> {
        let mut body = 0x2500i32.to_be_bytes().to_vec();
        cql::frame::put_string(&mut body, "unknown prepared statement");
        body.extend_from_slice(&(id.len() as u16).to_be_bytes());
        body.extend_from_slice(id);
        body
    }

    /// A RESULT body: the statement prepared under `id` (no bound columns, one key column).
    fn prepared_result(id: &[u8]) -> Vec<u8> {
        let mut body = 4i32.to_be_bytes().to_vec();
        body.extend_from_slice(&(id.len() as u16).to_be_bytes());
        body.extend_from_slice(id);
        for n in [0i32, 1, 1] {
            body.extend_from_slice(&n.to_be_bytes()); // flags, columns, partition-key count
        }
        body.extend_from_slice(&0u16.to_be_bytes());
        body
    }

    /// A schema change can evict a statement again right after it was prepared anew: the operation
    /// is prepared again each time, up to the bound, and fails only after it.
    #[test]
    fn an_operation_forgotten_again_is_prepared_again_up_to_the_bound() {
        let t0 = Instant::now();
        let at = |n: u64| t0 + Duration::from_millis(n);
        let pending = Pending {
            op: OpId::READ,
            intended: Some(t0),
            sent: t0,
            deadline: at(1000),
            slot_limited: false,
            reprepares: 0,
            state: None,
            rows: 0,
            pages: 0,
        };
        let mut conn = Conn::new(0, 2, None);
        conn.ids[OpId::READ.index()] = b"old".to_vec();
        assert!(conn.start(&execute(b"old"), pending));
        conn.out.clear();
        let mut completed = Vec::new();
        for round in 0..u64::from(MAX_REPREPARES) {
            arrive(&mut conn, 0, Opcode::Error, &unprepared_error(b"old"));
            conn.parse(at(10 * round + 1), &config(), &mut completed)
                .unwrap();
            assert!(completed.is_empty(), "UNPREPARED number {}", round + 1);
            let prepare = parse_header(&conn.out).unwrap();
            assert_eq!(prepare.opcode, Opcode::Prepare as u8);
            conn.out.clear();
            arrive(
                &mut conn,
                prepare.stream as u16,
                Opcode::Result,
                &prepared_result(b"old"),
            );
            conn.parse(at(10 * round + 2), &config(), &mut completed)
                .unwrap();
            assert_eq!(
                parse_header(&conn.out).unwrap().opcode,
                Opcode::Execute as u8
            );
            conn.out.clear();
        }
        arrive(&mut conn, 0, Opcode::Error, &unprepared_error(b"old"));
        conn.parse(at(100), &config(), &mut completed).unwrap();
        assert_eq!(completed.len(), 1);
        assert_eq!(completed[0].error, Some(ErrorKind::Other));
        assert_eq!(conn.reprepared, u64::from(MAX_REPREPARES));
        assert_eq!(conn.live, 0);
    }

    #[test]
    fn a_reprepared_operation_keeps_its_first_send_and_its_deadline() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let pending = Pending {
            op: OpId::READ,
            intended: Some(t0),
            sent: t0 + ms(1),
            deadline: t0 + ms(1) + ms(100),
            slot_limited: false,
            reprepares: 0,
            state: None,
            rows: 0,
            pages: 0,
        };
        let mut conn = Conn::new(0, 2, None);
        conn.ids[OpId::READ.index()] = b"old".to_vec();
        assert!(conn.start(&execute(b"old"), pending));
        let second = Pending {
            sent: t0 + ms(2),
            deadline: t0 + ms(2) + ms(100),
            ..pending
        };
        assert!(conn.start(&execute(b"old"), second));
        conn.out.clear(); // flushed
        let mut completed = Vec::new();
        // At 5 ms both come back UNPREPARED: they wait, and one PREPARE goes out for both.
        let unprepared = unprepared_error(b"old");
        arrive(&mut conn, 0, Opcode::Error, &unprepared);
        arrive(&mut conn, 1, Opcode::Error, &unprepared);
        conn.parse(t0 + ms(5), &config(), &mut completed).unwrap();
        assert!(completed.is_empty());
        assert_eq!(conn.live, 2);
        let prepare = parse_header(&conn.out).unwrap();
        assert_eq!(prepare.opcode, Opcode::Prepare as u8);
        assert_eq!(conn.out.len(), prepare.frame_len(), "one PREPARE");
        let prepare_stream = prepare.stream as u16;
        assert!(prepare_stream > 1);
        conn.out.clear();
        // At 7 ms the statement is prepared again under a new id: both EXECUTEs are re-sent with it
        // under their own stream ids.
        let prepared = prepared_result(b"new");
        arrive(&mut conn, prepare_stream, Opcode::Result, &prepared);
        conn.parse(t0 + ms(7), &config(), &mut completed).unwrap();
        assert_eq!(conn.reprepared, 2);
        let first = parse_header(&conn.out).unwrap();
        assert_eq!((first.opcode, first.stream), (Opcode::Execute as u8, 0));
        assert_eq!(cql::execute_id(&conn.out), Some(&b"new"[..]));
        conn.out.clear();
        // Stream 0's answer at 9 ms: one success whose latency and service time hold all three round
        // trips (EXECUTE, PREPARE, EXECUTE again), from the intended start and the first send.
        arrive(&mut conn, 0, Opcode::Result, &VOID);
        conn.parse(t0 + ms(9), &config(), &mut completed).unwrap();
        // Stream 1's answer comes after the deadline of its first send (2 + 100 ms): a timeout.
        arrive(&mut conn, 1, Opcode::Result, &VOID);
        conn.parse(t0 + ms(103), &config(), &mut completed).unwrap();
        let outcomes: Vec<_> = completed
            .iter()
            .map(|c| (c.error, c.intended, c.sent, c.done))
            .collect();
        assert_eq!(
            outcomes,
            [
                (None, t0, t0 + ms(1), t0 + ms(9)),
                (Some(ErrorKind::Timeout), t0, t0 + ms(2), t0 + ms(102)),
            ]
        );
        let mut recorder = IntervalRecorder::new(2);
        recorder.record(&completed[0], t0);
        let read = &recorder.measured[OpId::READ.index()];
        assert_eq!(read.latency.max(), read.latency.highest_equivalent(9_000));
        assert_eq!(read.service.max(), read.service.highest_equivalent(8_000));
        assert_eq!(conn.live, 0);
    }

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
            clients: 1,
            client_id: 0,
        };
        let schedule = Schedule {
            phase: &phase,
            lane: 1,
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

    #[test]
    fn clients_split_the_schedule_without_gap_or_overlap() {
        let claim = AtomicU64::new(0);
        let start = Instant::now();
        let count = 1000u64;
        let mut seen = vec![0u32; count as usize];
        for client_id in 0..3 {
            let phase = Phase {
                base: 0,
                count: Some(count),
                rate: Some(1000.0),
                start,
                deadline: None,
                drain_deadline: None,
                measure_start: start,
                concurrency: 10,
                threads: 2,
                group: 1,
                clients: 3,
                client_id,
            };
            let mut own = 0;
            for thread in 0..phase.threads {
                let schedule = Schedule {
                    phase: &phase,
                    lane: phase.lane(thread),
                    claim: &claim,
                };
                let mut relative = schedule.lane;
                while relative < count {
                    assert_eq!(
                        relative % 3,
                        client_id,
                        "client {client_id} took {relative}"
                    );
                    // Intended on the global schedule: start + relative / rate (1 ms apart).
                    let at = schedule.release_time(relative, 1e6).duration_since(start);
                    assert_eq!(at.as_nanos(), u128::from(relative) * 1_000_000);
                    seen[relative as usize] += 1;
                    own += 1;
                    relative += phase.stride();
                }
            }
            assert_eq!(own, phase.own_count(count), "client {client_id}");
        }
        assert!(seen.iter().all(|&n| n == 1), "every operation exactly once");
    }
}
