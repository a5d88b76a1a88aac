//! A slow link for fault tests, where the kernel has no `sch_netem` to delay packets: a TCP
//! relay in the test's namespace that forwards each connection to one target and delivers
//! every chunk it reads a set delay later, in order, each way.
//! [`super::netns::TestNetwork::relay_between_hosts`] sends every connection from one host to
//! another through one (`dnat`) from before the brokers start, so a delay set later holds up
//! the open connections too, as `tc netem delay` would: a request and its answer each take
//! `delay` longer.
//!
//! The delay may change at any time (zero heals the link); a chunk is never delivered before
//! the one read ahead of it. Everything stops on drop: the listener and every relayed
//! connection.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The relay of one target; see the module doc.
pub struct DelayRelay {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<thread::JoinHandle<()>>,
}

struct Shared {
    target: SocketAddr,
    delay_ms: AtomicU64,
    stopped: AtomicBool,
    /// Both ends of every relayed connection, to shut them on stop.
    streams: Mutex<Vec<TcpStream>>,
}

/// One direction's chunks waiting for their time; `None` is the reader's end of stream.
#[derive(Default)]
struct Line {
    chunks: Mutex<VecDeque<(Instant, Option<Vec<u8>>)>>,
    ready: Condvar,
}

impl DelayRelay {
    /// A relay listening on `ip` (a free port) that forwards to `target`, with no delay yet.
    pub fn start(ip: Ipv4Addr, target: SocketAddr) -> DelayRelay {
        let listener = TcpListener::bind((ip, 0)).expect("bind a relay");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            target,
            delay_ms: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            streams: Mutex::new(Vec::new()),
        });
        let acceptor = {
            let shared = Arc::clone(&shared);
            thread::spawn(move || accept(&listener, &shared))
        };
        DelayRelay {
            addr,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// From now on each chunk read is delivered `delay` later.
    pub fn set_delay(&self, delay: Duration) {
        self.shared
            .delay_ms
            .store(u64::try_from(delay.as_millis()).unwrap(), Ordering::Relaxed);
    }
}

impl Drop for DelayRelay {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::Relaxed);
        for stream in self.shared.streams.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    while !shared.stopped.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((client, _)) => {
                client.set_nonblocking(false).unwrap();
                // The target is down or cut: the client sees its connection closed.
                let Ok(server) = TcpStream::connect_timeout(&shared.target, Duration::from_secs(2))
                else {
                    continue;
                };
                relay(client, server, shared);
            }
            Err(_) => thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Two directions, each a reader and a writer joined by a [`Line`].
fn relay(client: TcpStream, server: TcpStream, shared: &Arc<Shared>) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    {
        let mut streams = shared.streams.lock().unwrap();
        streams.push(client.try_clone().unwrap());
        streams.push(server.try_clone().unwrap());
    }
    for (from, to) in [
        (client.try_clone().unwrap(), server.try_clone().unwrap()),
        (server, client),
    ] {
        let line = Arc::new(Line::default());
        {
            let (line, shared) = (Arc::clone(&line), Arc::clone(shared));
            thread::spawn(move || read_into(from, &line, &shared));
        }
        thread::spawn(move || write_from(to, &line));
    }
}

fn read_into(mut from: TcpStream, line: &Line, shared: &Shared) {
    let mut buf = vec![0; 64 * 1024];
    loop {
        let read = from.read(&mut buf);
        let due = Instant::now() + Duration::from_millis(shared.delay_ms.load(Ordering::Relaxed));
        let chunk = match read {
            Ok(n) if n > 0 => Some(buf[..n].to_vec()),
            _ => None,
        };
        let end = chunk.is_none();
        line.chunks.lock().unwrap().push_back((due, chunk));
        line.ready.notify_one();
        if end {
            return;
        }
    }
}

fn write_from(mut to: TcpStream, line: &Line) {
    loop {
        let (due, chunk) = {
            let mut chunks = line.chunks.lock().unwrap();
            loop {
                match chunks.pop_front() {
                    Some(next) => break next,
                    None => chunks = line.ready.wait(chunks).unwrap(),
                }
            }
        };
        // In order: a chunk read after a delay shrank still waits for the ones before it.
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
        match chunk {
            Some(bytes) if to.write_all(&bytes).is_ok() => {}
            Some(_) => {
                // The far end is gone: so is the other direction.
                let _ = to.shutdown(Shutdown::Both);
                return;
            }
            None => {
                let _ = to.shutdown(Shutdown::Write);
                return;
            }
        }
    }
}
