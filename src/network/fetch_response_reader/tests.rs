//! The streaming reader against the generated codec: responses encoded at every flexible
//! version, sent over a real loopback socket whole or in dribbles, read back partition by
//! partition as a decode in memory reads them.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::*;
use crate::protocol::frame::encode_response_frame;
use crate::protocol::messages::ResponseKind;
use crate::protocol::messages::fetch_response::{
    AbortedTransaction, EpochEndOffset, FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint,
};

/// What a handler saw of one partition: topic, fields (records unset), records.
type Seen = (FetchedTopic, PartitionData, Vec<u8>);

/// How the test handler takes piped records.
#[derive(Clone, Copy, PartialEq)]
enum Take {
    /// Alternately spliced into a file and read back, and read into memory.
    Both,
    /// Left in the pipe for the reader to drain.
    Nothing,
}

struct Recorder {
    seen: Vec<Seen>,
    take: Take,
    /// Partitions whose records came piped, and in memory.
    piped: usize,
    in_memory: usize,
    file: File,
}

impl Recorder {
    fn new(take: Take) -> Recorder {
        Recorder {
            seen: Vec::new(),
            take,
            piped: 0,
            in_memory: 0,
            file: tempfile::tempfile().unwrap(),
        }
    }
}

impl FetchResponseHandler for Recorder {
    fn partition(
        &mut self,
        topic: &FetchedTopic,
        partition: &PartitionData,
        records: &mut FetchedRecords<'_>,
    ) {
        let bytes = match records {
            FetchedRecords::None => Vec::new(),
            FetchedRecords::Memory(b) => {
                self.in_memory += 1;
                b.to_vec()
            }
            FetchedRecords::Piped(p) => {
                self.piped += 1;
                match self.take {
                    Take::Nothing => Vec::new(),
                    Take::Both if self.piped.is_multiple_of(2) => {
                        let mut buf = Vec::new();
                        p.read_into(&mut buf).unwrap();
                        buf
                    }
                    Take::Both => {
                        let len = p.len();
                        p.splice_to(&self.file, 100).unwrap();
                        let mut buf = vec![0; len];
                        self.file.read_exact_at(&mut buf, 100).unwrap();
                        buf
                    }
                }
            }
        };
        self.seen.push((topic.clone(), partition.clone(), bytes));
    }
}

fn records(len: usize, seed: u8) -> Option<Bytes> {
    Some(Bytes::from(
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31) ^ seed)
            .collect::<Vec<u8>>(),
    ))
}

/// Two topics: partitions with records of several sizes, null and empty records, a diverging
/// epoch, a current leader, aborted transactions, an error; node endpoints from v16.
fn response(version: i16, aborted: usize, big: usize) -> FetchResponse {
    let topic = |name: &str, id: u128, partitions: Vec<PartitionData>| FetchableTopicResponse {
        topic: if version <= 12 {
            StrBytes::from(name)
        } else {
            StrBytes::default()
        },
        topic_id: if version >= 13 {
            Uuid::from_u128(id)
        } else {
            Uuid::nil()
        },
        partitions,
        ..FetchableTopicResponse::default()
    };
    let partition = |index: i32, records: Option<Bytes>| PartitionData {
        partition_index: index,
        high_watermark: 1000 + i64::from(index),
        last_stable_offset: 900,
        log_start_offset: 7,
        records,
        ..PartitionData::default()
    };
    let mut diverged = partition(2, None);
    diverged.diverging_epoch = EpochEndOffset {
        epoch: 4,
        end_offset: 321,
        ..EpochEndOffset::default()
    };
    diverged.current_leader = LeaderIdAndEpoch {
        leader_id: 3,
        leader_epoch: 9,
        ..LeaderIdAndEpoch::default()
    };
    let mut with_aborted = partition(3, records(5000, 3));
    with_aborted.aborted_transactions = Some(
        (0..aborted)
            .map(|i| AbortedTransaction {
                producer_id: i as i64,
                first_offset: 10 * i as i64,
                ..AbortedTransaction::default()
            })
            .collect(),
    );
    let mut failed = partition(4, None);
    failed.error_code = 6;
    failed.high_watermark = -1;
    let mut r = FetchResponse {
        throttle_time_ms: 12,
        error_code: 0,
        session_id: 0,
        responses: vec![
            topic(
                "alpha",
                1,
                vec![
                    partition(0, records(100_000, 1)),
                    partition(1, Some(Bytes::new())),
                    diverged,
                    with_aborted,
                    failed,
                    partition(5, records(big, 5)),
                ],
            ),
            topic("beta", 2, vec![partition(0, records(17, 7))]),
            topic("gamma", 3, Vec::new()),
        ],
        ..FetchResponse::default()
    };
    if version >= 16 {
        r.node_endpoints = vec![NodeEndpoint {
            node_id: 3,
            host: StrBytes::from("localhost"),
            port: 9093,
            ..NodeEndpoint::default()
        }];
    }
    r
}

/// What a decode in memory hands the handler.
fn expected(response: &FetchResponse) -> Vec<Seen> {
    let mut recorder = Recorder::new(Take::Both);
    deliver_decoded(response.clone(), &mut recorder);
    recorder.seen
}

/// How a test response is sent and read.
struct Setup {
    /// Bytes per write...
    chunk: usize,
    /// ...and the pause after each.
    pause: Duration,
    /// The reader's deadline, from the start.
    deadline: Duration,
    take: Take,
    pipe_bytes: usize,
    /// Bytes of the frame sent in `chunk`-sized pieces, each only once the reader has taken
    /// every byte sent before it (the rest goes as `chunk` and `pause` say).
    paced: Option<Range<usize>>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            chunk: usize::MAX,
            pause: Duration::ZERO,
            deadline: LONG,
            take: Take::Both,
            pipe_bytes: 1 << 20,
            paced: None,
        }
    }
}

/// Sends `frame` from another thread as `setup` says and reads it with `read_fetch_response`;
/// returns how long the read took.
fn read_over_socket(
    frame: Vec<u8>,
    version: i16,
    correlation_id: i32,
    setup: Setup,
) -> (Result<FetchResponseHead, ExchangeError>, Recorder, Duration) {
    let Setup {
        chunk,
        pause,
        deadline,
        take,
        pipe_bytes,
        paced,
    } = setup;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let (reader_tx, reader_rx) = mpsc::channel::<TcpStream>();
    let sender = thread::spawn(move || {
        let (mut peer, _) = listener.accept().unwrap();
        let reader = reader_rx.recv().unwrap();
        let paced = paced.unwrap_or(frame.len()..frame.len());
        let pieces = frame[..paced.start]
            .chunks(chunk)
            .map(|piece| (piece, false))
            .chain(
                frame[paced.clone()]
                    .chunks(chunk)
                    .map(|piece| (piece, true)),
            )
            .chain(frame[paced.end..].chunks(chunk).map(|piece| (piece, false)));
        for (piece, paced) in pieces {
            if paced {
                wait_until_taken(&reader);
            }
            if peer.write_all(piece).is_err() {
                return;
            }
            if !pause.is_zero() {
                thread::sleep(pause);
            }
        }
        // Hold the connection open until the reader is done (its socket then closes: the
        // clone here must not keep it open).
        drop(reader);
        let _ = peer.read(&mut [0u8; 1]);
    });
    let mut socket = TcpStream::connect(address).unwrap();
    reader_tx.send(socket.try_clone().unwrap()).unwrap();
    let mut size = [0u8; 4];
    socket.read_exact(&mut size).unwrap();
    let size = usize::try_from(i32::from_be_bytes(size)).unwrap();
    let mut pipes = Pipes::new(pipe_bytes).unwrap();
    let mut recorder = Recorder::new(take);
    let started = Instant::now();
    let result = read_fetch_response(
        &socket,
        &mut pipes,
        version,
        correlation_id,
        size,
        Instant::now() + deadline,
        &mut recorder,
    );
    let took = started.elapsed();
    drop(socket);
    sender.join().unwrap();
    (result, recorder, took)
}

/// Waits until `reader` (the reading end's socket) has nothing left to read.
fn wait_until_taken(reader: &TcpStream) {
    let deadline = Instant::now() + LONG;
    let flags = MsgFlags::MSG_PEEK | MsgFlags::MSG_DONTWAIT;
    loop {
        match recv(reader.as_raw_fd(), &mut [0u8; 1], flags) {
            Err(Errno::EAGAIN) | Ok(0) => return,
            Ok(_) | Err(Errno::EINTR) => {}
            Err(err) => panic!("peeking at the reader's socket: {err}"),
        }
        assert!(
            Instant::now() < deadline,
            "the reader took nothing for {LONG:?}"
        );
        thread::sleep(Duration::from_micros(100));
    }
}

fn frame(response: &FetchResponse, version: i16, correlation_id: i32) -> Vec<u8> {
    encode_response_frame(
        correlation_id,
        &ResponseKind::Fetch(response.clone()),
        version,
    )
    .unwrap()
    .to_vec()
}

const LONG: Duration = Duration::from_secs(20);

#[test]
fn every_flexible_version_reads_as_the_decoder_reads_it() {
    for version in FIRST_STREAMED_VERSION..=17 {
        let response = response(version, 2, 300_000);
        let (head, recorder, _) =
            read_over_socket(frame(&response, version, 77), version, 77, Setup::default());
        let head = head.unwrap_or_else(|_| panic!("v{version} failed"));
        assert_eq!(head.throttle_time_ms, 12, "v{version}");
        assert_eq!(recorder.seen, expected(&response), "v{version}");
        assert!(
            recorder.piped >= 3,
            "v{version}: records went through the pipe"
        );
    }
}

#[test]
fn a_response_that_arrives_in_dribbles_reads_the_same() {
    let response = response(17, 2, 3000);
    let (head, recorder, _) = read_over_socket(
        frame(&response, 17, 5),
        17,
        5,
        Setup {
            chunk: 997,
            pause: Duration::from_micros(200),
            ..Setup::default()
        },
    );
    head.unwrap();
    assert_eq!(recorder.seen, expected(&response));
}

#[test]
fn a_stretch_larger_than_a_peek_and_records_larger_than_the_pipe_go_through_memory() {
    // 5,000 aborted transactions take 85 KB before the partition's records; 5 MiB of records
    // do not fit four 1 MiB pipes.
    for (aborted, big, piped) in [(5000, 10, 1), (2, 5 << 20, 3)] {
        let response = response(17, aborted, big);
        let (head, recorder, _) =
            read_over_socket(frame(&response, 17, 5), 17, 5, Setup::default());
        head.unwrap();
        assert_eq!(recorder.seen, expected(&response));
        // Only what comes before the switch to memory goes through the pipe.
        assert_eq!(recorder.piped, piped, "aborted {aborted}, records {big}");
    }
}

#[test]
fn records_the_handler_leaves_are_drained() {
    let response = response(17, 2, 3000);
    let (head, recorder, _) = read_over_socket(
        frame(&response, 17, 5),
        17,
        5,
        Setup {
            take: Take::Nothing,
            ..Setup::default()
        },
    );
    head.unwrap();
    let seen: Vec<_> = recorder.seen.iter().map(|(t, p, _)| (t, p)).collect();
    let expected = expected(&response);
    let want: Vec<_> = expected.iter().map(|(t, p, _)| (t, p)).collect();
    assert_eq!(seen, want);
}

#[test]
fn another_requests_response_is_a_mismatch() {
    let response = response(17, 0, 10);
    let (head, _, _) = read_over_socket(frame(&response, 17, 6), 17, 5, Setup::default());
    assert!(matches!(head, Err(ExchangeError::Mismatch(6))));
}

#[test]
fn a_truncated_response_fails_without_waiting_for_the_deadline() {
    let response = response(17, 0, 10);
    let mut frame = frame(&response, 17, 5);
    // Claim more bytes than are sent; the sender closes after its last write.
    frame.truncate(frame.len() - 40);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let sender = thread::spawn(move || {
        let (mut peer, _) = listener.accept().unwrap();
        peer.write_all(&frame).unwrap();
    });
    let mut socket = TcpStream::connect(address).unwrap();
    let mut size = [0u8; 4];
    socket.read_exact(&mut size).unwrap();
    sender.join().unwrap();
    let started = Instant::now();
    let mut pipes = Pipes::new(1 << 20).unwrap();
    let result = read_fetch_response(
        &socket,
        &mut pipes,
        17,
        5,
        usize::try_from(i32::from_be_bytes(size)).unwrap(),
        Instant::now() + LONG,
        &mut Recorder::new(Take::Both),
    );
    assert!(matches!(result, Err(ExchangeError::Io(_))));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_stalled_leader_times_out_at_the_deadline() {
    let response = response(17, 0, 10);
    let frame = frame(&response, 17, 5);
    // Half the response, then nothing for longer than the deadline.
    let half = frame.len() / 2;
    let (result, _, took) = read_over_socket(
        frame,
        17,
        5,
        Setup {
            chunk: half,
            pause: Duration::from_millis(800),
            deadline: Duration::from_millis(500),
            ..Setup::default()
        },
    );
    assert!(
        matches!(&result, Err(ExchangeError::Io(e)) if e.kind() == io::ErrorKind::TimedOut || e.kind() == io::ErrorKind::WouldBlock),
        "{:?}",
        result.as_ref().err().map(|e| match e {
            ExchangeError::Io(e) => e.to_string(),
            _ => "other".into(),
        })
    );
    assert!(took >= Duration::from_millis(450), "{took:?}");
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn records_that_overflow_a_pipes_pages_go_on_in_the_next_or_to_memory() {
    // One-page pipes: records of 3,000 and 20,000 bytes arriving in pieces may take more
    // pages than one pipe, or all four, hold (how many depends on how the kernel coalesces
    // the pieces); either way every partition reads as the decoder reads it.
    for (len, chunk) in [(3000, 997), (20_000, 499)] {
        let mut response = response(17, 0, 10);
        response.responses[0].partitions[0].records = records(len, 9);
        let (head, recorder, _) = read_over_socket(
            frame(&response, 17, 5),
            17,
            5,
            Setup {
                chunk,
                pause: Duration::from_micros(300),
                pipe_bytes: 4096,
                ..Setup::default()
            },
        );
        head.unwrap();
        assert_eq!(recorder.seen, expected(&response), "{len} bytes");
    }
}

#[test]
fn records_that_fill_every_pipe_go_to_memory_with_what_was_piped_first() {
    // One-page pipes and records arriving 499 bytes at a time, each piece only once the reader
    // has spliced the last: every piece takes a pipe's page of its own, so the pipes are full
    // long before 12,000 bytes (which the four pipes' pages could hold) are in.
    let len = 12_000;
    let mut response = FetchResponse::default();
    response.responses.push(FetchableTopicResponse {
        topic_id: Uuid::from_u128(7),
        partitions: vec![PartitionData {
            partition_index: 3,
            high_watermark: 12,
            records: records(len, 5),
            ..PartitionData::default()
        }],
        ..FetchableTopicResponse::default()
    });
    let frame = frame(&response, 17, 5);
    let bytes = records(len, 5).unwrap();
    let start = frame
        .windows(len)
        .position(|w| w == &bytes[..])
        .expect("the records are in the frame");
    // The reader's first peek takes up to FIRST_PEEK bytes whole, records included.
    let paced = (start + FIRST_PEEK).min(start + len)..start + len;
    let (head, recorder, _) = read_over_socket(
        frame,
        17,
        5,
        Setup {
            chunk: 499,
            pipe_bytes: 4096,
            paced: Some(paced),
            ..Setup::default()
        },
    );
    head.unwrap();
    assert_eq!((recorder.piped, recorder.in_memory), (0, 1));
    assert_eq!(recorder.seen, expected(&response));
}
