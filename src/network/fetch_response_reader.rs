//! A replica fetcher's Fetch response (flexible versions, 12+) read off a plain TCP socket as it
//! arrives, so that each partition's records go from the socket into a pipe and from there into
//! the follower's segment file: the kernel moves the socket's pages into the pipe and copies
//! them once into the page cache, where reading them into a buffer and writing that buffer
//! copies them twice (docs/benchmarks.md measures the difference).
//!
//! The fields around the records are parsed from peeks of the socket (`MSG_PEEK`) and consumed
//! once a stretch up to the next records field parses whole. A stretch that does not parse
//! within [`MAX_PEEK`] bytes (thousands of aborted transactions) makes the rest of the response
//! be read into memory and parsed there. A pipe counts pages, not bytes, and a socket's pages
//! are not always full: records go on in a second pipe when the first has no page left, up to
//! [`MAX_PIPES`], and only records that fill them all go to memory (what was piped first).
//! Either way the handler sees the same partitions.
//!
//! The handler gets each partition once its trailing tagged fields (the diverging epoch) are
//! read, with its records still in the pipes: it splices them where it wants
//! ([`PipedRecords::splice_to`]) or reads them ([`PipedRecords::read_into`]); what it leaves is
//! drained before the next partition. A partition's records are in the pipes whole before the
//! handler sees it, so what the handler does never waits on the network.
//!
//! It blocks: it runs on a blocking thread with the socket in blocking mode, every wait bounded
//! by the request's deadline (`SO_RCVTIMEO`). On an error the connection and the pipes are in an
//! unknown state and are dropped by the caller.

use std::fs::File;
use std::io::{self, Read};
use std::net::TcpStream;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, SpliceFFlags, fcntl, splice};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{MsgFlags, recv};
use uuid::Uuid;

use crate::protocol::codec::{DecodeError, DecodeErrorKind, StrBytes};
use crate::protocol::messages::fetch_response::{FetchResponse, PartitionData};

use super::network_client::ExchangeError;
use parse::{At, Event, parse_stretch};

/// The first Fetch version with compact fields and tagged fields.
pub(crate) const FIRST_STREAMED_VERSION: i16 = 12;

/// The first peek of a stretch between two records fields; doubled until it parses.
const FIRST_PEEK: usize = 512;

/// The largest peek: a socket's receive buffer holds at least this much on any Linux default.
pub(crate) const MAX_PEEK: usize = 64 * 1024;

/// How long a read timeout set to the time left stays in force before it is set again.
const REARM_AFTER: Duration = Duration::from_millis(100);

/// Linux's default `/proc/sys/fs/pipe-max-size`, the most a process without
/// `CAP_SYS_RESOURCE` may ask for.
const UNPRIVILEGED_PIPE_MAX: i32 = 1 << 20;

/// How close to the deadline a short peek counts as timed out rather than as a closed
/// connection.
const TIMEOUT_SLACK: Duration = Duration::from_millis(20);

/// A pipe that holds (part of) one partition's records at a time. Its capacity counts pages.
#[derive(Debug)]
pub(crate) struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
    capacity: usize,
}

impl Pipe {
    /// A pipe of `wanted` bytes, or of the most this process may have
    /// (`/proc/sys/fs/pipe-max-size` without `CAP_SYS_RESOURCE`).
    pub(crate) fn new(wanted: usize) -> io::Result<Pipe> {
        let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
        let wanted = i32::try_from(wanted).unwrap_or(i32::MAX);
        let capacity = fcntl(&write, FcntlArg::F_SETPIPE_SZ(wanted))
            .or_else(|_| fcntl(&write, FcntlArg::F_SETPIPE_SZ(UNPRIVILEGED_PIPE_MAX)))
            .or_else(|_| fcntl(&write, FcntlArg::F_GETPIPE_SZ))?;
        Ok(Pipe {
            read,
            write,
            capacity: usize::try_from(capacity).unwrap_or(0),
        })
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Reads `len` bytes out of the pipe into `buf`.
    fn read_into(&self, len: usize, buf: &mut Vec<u8>) -> io::Result<()> {
        let start = buf.len();
        buf.resize(start + len, 0);
        let mut filled = start;
        while filled < buf.len() {
            match nix::unistd::read(&self.read, &mut buf[filled..]) {
                Ok(0) => {
                    buf.truncate(filled);
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                Ok(n) => filled += n,
                Err(Errno::EINTR) => {}
                Err(err) => {
                    buf.truncate(filled);
                    return Err(err.into());
                }
            }
        }
        Ok(())
    }
}

/// How many pipes one partition's records may take before they go to memory.
pub(crate) const MAX_PIPES: usize = 4;

/// The pipes a response's records wait in, one partition at a time: a partition's records fill
/// the first and go on in the next when its pages run out (a pipe counts pages, and a socket's
/// pages are not always full). Made on first use, [`MAX_PIPES`] at most.
#[derive(Debug)]
pub(crate) struct Pipes {
    pipes: Vec<Pipe>,
    wanted: usize,
}

impl Pipes {
    /// Pipes of `wanted` bytes each (see [`Pipe::new`]); the first is made here.
    pub(crate) fn new(wanted: usize) -> io::Result<Pipes> {
        Ok(Pipes {
            pipes: vec![Pipe::new(wanted)?],
            wanted,
        })
    }

    /// Pipe `i`, made if it is not yet.
    fn get(&mut self, i: usize) -> io::Result<&Pipe> {
        while self.pipes.len() <= i {
            self.pipes.push(Pipe::new(self.wanted)?);
        }
        Ok(&self.pipes[i])
    }

    /// The most bytes records may have to be piped: what the pipes hold when full pages come.
    fn max_bytes(&self) -> usize {
        self.pipes.first().map_or(0, Pipe::capacity) * MAX_PIPES
    }
}

/// The topic a partition belongs to, as the response names it: by name up to v12, by id from
/// v13 (the other is empty or nil).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchedTopic {
    pub name: StrBytes,
    pub topic_id: Uuid,
}

/// A partition's records as the handler gets them.
#[derive(Debug)]
pub enum FetchedRecords<'a> {
    /// Null or empty.
    None,
    /// Read into memory (from a TLS connection, an old version, or too large for the pipes).
    Memory(Bytes),
    /// Waiting in the pipes.
    Piped(PipedRecords<'a>),
}

/// A partition's records waiting in the pipes, in order: `lens[i]` bytes in pipe `i`.
#[derive(Debug)]
pub struct PipedRecords<'a> {
    pipes: &'a [Pipe],
    lens: [usize; MAX_PIPES],
}

impl PipedRecords<'_> {
    /// The bytes still in the pipes.
    pub fn len(&self) -> usize {
        self.lens.iter().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Moves them into `file` at `position` (`splice(2)`: one copy, in the kernel).
    pub fn splice_to(&mut self, file: &File, position: u64) -> io::Result<()> {
        let mut offset = i64::try_from(position).map_err(io::Error::other)?;
        for (pipe, left) in self.pipes.iter().zip(self.lens.iter_mut()) {
            while *left > 0 {
                match splice(
                    &pipe.read,
                    None,
                    file,
                    Some(&mut offset),
                    *left,
                    SpliceFFlags::SPLICE_F_MOVE,
                ) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(n) => *left -= n,
                    Err(Errno::EINTR) => {}
                    Err(err) => return Err(err.into()),
                }
            }
        }
        Ok(())
    }

    /// Reads them into `buf` (appended).
    pub fn read_into(&mut self, buf: &mut Vec<u8>) -> io::Result<()> {
        for (pipe, left) in self.pipes.iter().zip(self.lens.iter_mut()) {
            let len = std::mem::take(left);
            pipe.read_into(len, buf)?;
        }
        Ok(())
    }
}

/// What a fetcher does with each partition of a response.
pub trait FetchResponseHandler: Send {
    /// One partition: its fields (`records` unset) and its records. Called in response order,
    /// on the thread reading the response.
    fn partition(
        &mut self,
        topic: &FetchedTopic,
        partition: &PartitionData,
        records: &mut FetchedRecords<'_>,
    );
}

/// The response's top-level fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FetchResponseHead {
    pub throttle_time_ms: i32,
    pub error_code: i16,
    pub session_id: i32,
}

/// Hands a response decoded in memory to `handler`, partition by partition, as
/// `read_fetch_response` would.
pub(crate) fn deliver_decoded(
    response: FetchResponse,
    handler: &mut dyn FetchResponseHandler,
) -> FetchResponseHead {
    let head = FetchResponseHead {
        throttle_time_ms: response.throttle_time_ms,
        error_code: response.error_code,
        session_id: response.session_id,
    };
    for topic in response.responses {
        let fetched = FetchedTopic {
            name: topic.topic,
            topic_id: topic.topic_id,
        };
        for mut partition in topic.partitions {
            let mut records = match partition.records.take() {
                Some(bytes) if !bytes.is_empty() => FetchedRecords::Memory(bytes),
                _ => FetchedRecords::None,
            };
            handler.partition(&fetched, &partition, &mut records);
        }
    }
    head
}

/// Reads the `size`-byte body of the response to `correlation_id` (its size prefix already
/// read) from `socket`, in blocking mode, by `deadline`, handing each partition to `handler`.
/// `pipes` must be empty; they are empty again on success.
pub(super) fn read_fetch_response(
    socket: &TcpStream,
    pipes: &mut Pipes,
    version: i16,
    correlation_id: i32,
    size: usize,
    deadline: Instant,
    handler: &mut dyn FetchResponseHandler,
) -> Result<FetchResponseHead, ExchangeError> {
    let mut input = Input {
        socket,
        remaining: size,
        memory: None,
        window: Vec::new(),
        deadline,
        armed_at: None,
    };
    let mut at = At::Start;
    let mut head = FetchResponseHead::default();
    let mut topic = FetchedTopic::default();
    let mut pending: Option<(PartitionData, Held)> = None;
    let mut drain = Vec::new();
    while at != At::Done {
        let (next, events, used) = input.next_stretch(at, version)?;
        input.consume(used).map_err(ExchangeError::Io)?;
        at = next;
        for event in events {
            match event {
                Event::Head {
                    correlation_id: received,
                    head: h,
                } => {
                    if received != correlation_id {
                        return Err(ExchangeError::Mismatch(received));
                    }
                    head = h;
                }
                Event::Topic(t) => topic = t,
                Event::Partition { data, records_len } => {
                    let held = match records_len {
                        0 => Held::None,
                        len => input.records(len, pipes).map_err(ExchangeError::Io)?,
                    };
                    pending = Some((data, held));
                }
                Event::PartitionTail(tags) => {
                    let Some((mut data, held)) = pending.take() else {
                        continue;
                    };
                    tags.apply(&mut data);
                    let mut records = match held {
                        Held::None => FetchedRecords::None,
                        Held::Memory(bytes) => FetchedRecords::Memory(bytes),
                        Held::Piped(lens) => FetchedRecords::Piped(PipedRecords {
                            pipes: &pipes.pipes,
                            lens,
                        }),
                    };
                    handler.partition(&topic, &data, &mut records);
                    if let FetchedRecords::Piped(left) = &mut records
                        && !left.is_empty()
                    {
                        drain.clear();
                        left.read_into(&mut drain).map_err(ExchangeError::Io)?;
                    }
                }
            }
        }
    }
    if input.remaining() > 0 {
        return Err(ExchangeError::Decode(
            DecodeError::new(
                "FetchResponse",
                DecodeErrorKind::TrailingBytes(input.remaining()),
            )
            .in_message("FetchResponse", version),
        ));
    }
    Ok(head)
}

/// Where a partition's records wait until its tail is read.
#[derive(Debug)]
enum Held {
    None,
    Memory(Bytes),
    Piped([usize; MAX_PIPES]),
}

/// The response's bytes not consumed yet: on the socket, or all in memory.
struct Input<'a> {
    socket: &'a TcpStream,
    /// Bytes of the response still on the socket (0 once it is all in memory).
    remaining: usize,
    memory: Option<Bytes>,
    /// The peek buffer.
    window: Vec<u8>,
    deadline: Instant,
    /// When the socket's read timeout was last set to the time left.
    armed_at: Option<Instant>,
}

impl Input<'_> {
    fn remaining(&self) -> usize {
        self.remaining + self.memory.as_ref().map_or(0, Bytes::len)
    }

    /// Whether the deadline is (all but) reached: a blocking socket's timeout and the deadline
    /// differ by the clock's granularity.
    fn deadline_passed(&self) -> bool {
        self.deadline.saturating_duration_since(Instant::now()) <= TIMEOUT_SLACK
    }

    fn arm_timeout(&mut self) -> io::Result<()> {
        arm_timeout(self.socket, self.deadline, &mut self.armed_at)
    }

    /// Parses the stretch from `at` up to the next records field (or the end), peeking more
    /// until it parses whole.
    fn next_stretch(
        &mut self,
        at: At,
        version: i16,
    ) -> Result<(At, Vec<Event>, usize), ExchangeError> {
        let mut want = FIRST_PEEK.min(self.remaining());
        loop {
            let remaining = self.remaining();
            let parsed = {
                let window = self.peek(want).map_err(ExchangeError::Io)?;
                parse_stretch(at, version, window)
            };
            match parsed {
                Ok(Some(parsed)) => return Ok(parsed),
                Ok(None) if want < remaining => {
                    if want >= MAX_PEEK && self.memory.is_none() {
                        self.read_rest_into_memory().map_err(ExchangeError::Io)?;
                    }
                    want = (want * 2).min(self.remaining());
                }
                Ok(None) => {
                    return Err(ExchangeError::Decode(
                        DecodeError::new(
                            "FetchResponse",
                            DecodeErrorKind::UnexpectedEof {
                                needed: want + 1,
                                remaining: want,
                            },
                        )
                        .in_message("FetchResponse", version),
                    ));
                }
                Err(err) => {
                    return Err(ExchangeError::Decode(
                        err.in_message("FetchResponse", version),
                    ));
                }
            }
        }
    }

    /// The next `n` bytes, not consumed (`n` at most what remains).
    fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        if let Some(memory) = &self.memory {
            return Ok(&memory[..n]);
        }
        if self.window.len() < n {
            self.window.resize(n, 0);
        }
        loop {
            arm_timeout(self.socket, self.deadline, &mut self.armed_at)?;
            let flags = MsgFlags::MSG_PEEK | MsgFlags::MSG_WAITALL;
            match recv(self.socket.as_raw_fd(), &mut self.window[..n], flags) {
                Ok(k) if k >= n => return Ok(&self.window[..n]),
                // Short with `MSG_WAITALL`: the peer closed, or the timeout struck with part
                // of the bytes there.
                Ok(_) if self.deadline_passed() => return Err(io::ErrorKind::TimedOut.into()),
                Ok(_) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => return Err(io::ErrorKind::TimedOut.into()),
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// Consumes `n` bytes already peeked.
    fn consume(&mut self, n: usize) -> io::Result<()> {
        if let Some(memory) = &mut self.memory {
            memory.advance(n);
            return Ok(());
        }
        if self.window.len() < n {
            self.window.resize(n, 0);
        }
        self.arm_timeout()?;
        let mut socket = self.socket;
        socket.read_exact(&mut self.window[..n])?;
        self.remaining -= n;
        Ok(())
    }

    /// The next `n` bytes in memory.
    fn take(&mut self, n: usize) -> io::Result<Bytes> {
        if let Some(memory) = &mut self.memory {
            return Ok(memory.split_to(n));
        }
        let mut bytes = BytesMut::zeroed(n);
        self.arm_timeout()?;
        let mut socket = self.socket;
        socket.read_exact(&mut bytes)?;
        self.remaining -= n;
        Ok(bytes.freeze())
    }

    fn read_rest_into_memory(&mut self) -> io::Result<()> {
        let rest = self.take(self.remaining)?;
        self.memory = Some(rest);
        Ok(())
    }

    /// Moves the next `len` bytes (a partition's records) into the pipes, or into memory when
    /// they are in memory already or do not fit the pipes.
    fn records(&mut self, len: usize, pipes: &mut Pipes) -> io::Result<Held> {
        if len > self.remaining() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "records longer than the rest of the response",
            ));
        }
        if self.memory.is_some() || len > pipes.max_bytes() {
            return self.take(len).map(Held::Memory);
        }
        // Non-blocking, so that a full pipe is an answer rather than a wait nobody ends; the
        // socket is waited on with poll(2).
        let flags = SpliceFFlags::SPLICE_F_MOVE | SpliceFFlags::SPLICE_F_NONBLOCK;
        let mut lens = [0usize; MAX_PIPES];
        let mut spliced = 0;
        let mut current = 0;
        let mut readable = false;
        while spliced < len {
            let pipe = pipes.get(current)?;
            match splice(self.socket, None, &pipe.write, None, len - spliced, flags) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    lens[current] += n;
                    spliced += n;
                    self.remaining -= n;
                    readable = false;
                }
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) if !readable => {
                    self.wait_readable()?;
                    readable = true;
                }
                // Bytes to read and no room for them: this pipe's pages are taken.
                Err(Errno::EAGAIN) if current + 1 < MAX_PIPES => {
                    current += 1;
                    readable = false;
                }
                Err(Errno::EAGAIN) => {
                    // Every pipe is full: the records go to memory, what is piped first.
                    let mut bytes = Vec::with_capacity(len);
                    let mut piped = PipedRecords {
                        pipes: &pipes.pipes,
                        lens,
                    };
                    piped.read_into(&mut bytes)?;
                    let rest = self.take(len - spliced)?;
                    bytes.extend_from_slice(&rest);
                    return Ok(Held::Memory(Bytes::from(bytes)));
                }
                Err(err) => return Err(err.into()),
            }
        }
        Ok(Held::Piped(lens))
    }

    /// Waits until the socket has bytes to read (or the peer closed it), by the deadline.
    fn wait_readable(&self) -> io::Result<()> {
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
            let mut fds = [PollFd::new(self.socket.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, timeout) {
                Ok(0) => return Err(io::ErrorKind::TimedOut.into()),
                Ok(_) => return Ok(()),
                Err(Errno::EINTR) => {}
                Err(err) => return Err(err.into()),
            }
        }
    }
}

/// Sets `socket`'s read timeout to the time left before `deadline`, unless it was set within
/// [`REARM_AFTER`] (`armed_at`): one `setsockopt` per response rather than per read, a blocking
/// read outliving the deadline by at most that much.
fn arm_timeout(
    socket: &TcpStream,
    deadline: Instant,
    armed_at: &mut Option<Instant>,
) -> io::Result<()> {
    let now = Instant::now();
    if armed_at.is_some_and(|at| now.duration_since(at) < REARM_AFTER) {
        return Ok(());
    }
    let left = deadline.saturating_duration_since(now);
    if left.is_zero() {
        return Err(io::ErrorKind::TimedOut.into());
    }
    socket.set_read_timeout(Some(left))?;
    *armed_at = Some(now);
    Ok(())
}

mod parse;
#[cfg(test)]
mod tests;
