//! The harness of the `serve_*` tests: [`TestBroker`] runs `kcli serve` as a real process on a
//! free port of 127.0.0.1 with its data in a temp dir, waits for "started kcli broker", and stops
//! it by its PID (SIGTERM, waited for with a limit), kills it (SIGKILL) or restarts it on the same
//! dir and port. Its stderr goes to a file per start in the temp dir, printed when the test
//! fails. A [`Launch`] runs it under a lower `ulimit -n` or in a network namespace of a
//! [`crate::support::netns::TestNetwork`], on that namespace's address. [`KafkaConn`] is a blocking raw-protocol client over the crate's codec, with timeouts
//! on every read and write; [`run_within`] runs an external client with a time limit.

use std::fs;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kcli::protocol::codec::{Message, Reader, StrBytes};
use kcli::protocol::messages::{
    ApiKey, RequestHeader, RequestKind, ResponseHeader, ResponseKind, encode_request_frame,
};

/// How long a broker may take to start, and to stop after SIGTERM.
const START_LIMIT: Duration = Duration::from_secs(30);
const STOP_LIMIT: Duration = Duration::from_secs(20);

/// A port that was free a moment ago (bound on 127.0.0.1:0, read, released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// How a [`TestBroker`]'s process runs, beyond its overrides.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// `ulimit -n` of the process, soft and hard alike (through `prlimit`), when set.
    pub open_file_limit: Option<u64>,
    /// A network namespace to run in (`ip netns exec`) and its address, which the broker listens
    /// on; 127.0.0.1 in the test's own namespace when `None`.
    pub netns: Option<(String, Ipv4Addr)>,
    /// Overrides of this broker's own, after the shared ones (`broker.rack`, say).
    pub overrides: Vec<(String, String)>,
}

/// A `kcli serve` process; killed (SIGKILL) on drop if still running, and its stderr printed
/// when the test is failing.
pub struct TestBroker {
    child: Option<Child>,
    port: u16,
    /// A second free port, for an override's `{port2}` (a second listener).
    port2: u16,
    dir: tempfile::TempDir,
    overrides: Vec<String>,
    /// One stderr file per start, in order.
    logs: Vec<PathBuf>,
    launch: Launch,
}

impl TestBroker {
    /// Starts a broker on a free port and a fresh data dir, with `--override key=value` for
    /// each of `overrides` (after the listener and log dir, so they may replace them). In an
    /// override's value `{port}` is the broker's port and `{port2}` a second free port.
    pub fn start(overrides: &[(&str, &str)]) -> TestBroker {
        TestBroker::start_with(overrides, Launch::default())
    }

    /// [`TestBroker::start`] as `launch` says, every start.
    pub fn start_with(overrides: &[(&str, &str)], launch: Launch) -> TestBroker {
        let mut broker = TestBroker {
            child: None,
            port: 0,
            port2: 0,
            dir: tempfile::tempdir().unwrap(),
            overrides: overrides
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .chain(launch.overrides.iter().map(|(k, v)| format!("{k}={v}")))
                .collect(),
            logs: Vec::new(),
            launch,
        };
        // Another test may take the free port before the broker binds it: try another one.
        for attempt in 0.. {
            broker.port = match broker.launch.netns {
                Some(_) => crate::support::netns::NETNS_PORT,
                None => free_port(),
            };
            broker.port2 = free_port();
            match broker.spawn() {
                Ok(()) => return broker,
                Err(log) if attempt < 4 && log.contains("in use") => continue,
                Err(log) => panic!("kcli serve did not start:\n{log}"),
            }
        }
        unreachable!()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address the broker listens on: 127.0.0.1, or its namespace's.
    pub fn host(&self) -> Ipv4Addr {
        self.launch
            .netns
            .as_ref()
            .map_or(Ipv4Addr::LOCALHOST, |(_, addr)| *addr)
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((self.host(), self.port))
    }

    pub fn bootstrap(&self) -> String {
        self.addr().to_string()
    }

    /// The second port (`{port2}` in the overrides).
    pub fn port2(&self) -> u16 {
        self.port2
    }

    /// The PID of the running process.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("broker is not running").id()
    }

    /// `log.dirs`.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A scratch dir beside the data, removed with the broker.
    pub fn scratch(&self) -> &Path {
        self.dir.path()
    }

    /// Everything the broker wrote on stderr, over every start.
    pub fn stderr(&self) -> String {
        let mut out = String::new();
        for (i, path) in self.logs.iter().enumerate() {
            out.push_str(&format!("--- kcli serve stderr, start {} ---\n", i + 1));
            out.push_str(&fs::read_to_string(path).unwrap_or_default());
        }
        out
    }

    fn spawn(&mut self) -> Result<(), String> {
        assert!(self.child.is_none(), "broker is already running");
        let log = self
            .dir
            .path()
            .join(format!("stderr-{}.log", self.logs.len() + 1));
        self.logs.push(log.clone());
        // `ip netns exec` and prlimit each set up the process and exec the next: the PID is the
        // broker's.
        let mut program: Vec<String> = Vec::new();
        if let Some((ns, _)) = &self.launch.netns {
            program.extend(["ip".into(), "netns".into(), "exec".into(), ns.clone()]);
        }
        if let Some(n) = self.launch.open_file_limit {
            program.extend(["prlimit".into(), format!("--nofile={n}:{n}"), "--".into()]);
        }
        program.push(env!("CARGO_BIN_EXE_kcli").into());
        let mut cmd = Command::new(&program[0]);
        cmd.args(&program[1..])
            .arg("serve")
            .arg("--override")
            .arg(format!(
                "listeners=PLAINTEXT://{}:{}",
                self.host(),
                self.port
            ))
            .arg("--override")
            .arg(format!("log.dirs={}", self.data_dir().display()));
        // `{port}` and `{port2}` in an override are the broker's two ports (for listeners of
        // another protocol).
        for o in &self.overrides {
            let o = o
                .replace("{port}", &self.port.to_string())
                .replace("{port2}", &self.port2.to_string());
            cmd.arg("--override").arg(o);
        }
        let child = cmd
            .env("NO_COLOR", "1")
            // KCLI_TEST_LOG overrides the brokers' log filter when debugging a test.
            .env(
                "RUST_LOG",
                std::env::var("KCLI_TEST_LOG").unwrap_or_else(|_| "warn,kcli=info".into()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(fs::File::create(&log).unwrap()))
            .spawn()
            .unwrap();
        self.child = Some(child);
        let start = Instant::now();
        loop {
            let text = fs::read_to_string(&log).unwrap_or_default();
            if text.contains("started kcli broker") {
                return Ok(());
            }
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                self.child = None;
                return Err(format!("exited with {status} before serving:\n{text}"));
            }
            if start.elapsed() > START_LIMIT {
                self.kill9();
                return Err(format!("not serving after {START_LIMIT:?}:\n{text}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM and waits for a clean exit (status 0, "shut down cleanly" logged).
    pub fn stop(&mut self) {
        self.stop_within(STOP_LIMIT);
    }

    /// [`TestBroker::stop`], failing when the broker takes longer than `limit` to exit.
    pub fn stop_within(&mut self, limit: Duration) {
        let pid = self.pid();
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status()
            .unwrap();
        assert!(status.success(), "kill -TERM {pid}: {status}");
        let status = self.wait_exit(limit);
        assert!(
            status.success(),
            "kcli serve exited with {status} after SIGTERM:\n{}",
            self.stderr()
        );
        assert!(
            self.stderr().contains("shut down cleanly"),
            "no clean shutdown logged:\n{}",
            self.stderr()
        );
    }

    /// Kills the process with SIGKILL (no chance to flush or checkpoint anything).
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Adds overrides for the next starts (after the others, so they win).
    pub fn add_overrides(&mut self, overrides: &[(&str, &str)]) {
        self.overrides
            .extend(overrides.iter().map(|(k, v)| format!("{k}={v}")));
    }

    /// Starts the broker again on the same data dir and port, with the same overrides.
    pub fn restart(&mut self) {
        if let Err(log) = self.spawn() {
            panic!("kcli serve did not restart:\n{log}");
        }
    }

    /// Waits for the process to exit (killing it and failing after `limit`); its status.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                self.child = None;
                return status;
            }
            if start.elapsed() > limit {
                self.kill9();
                panic!(
                    "kcli serve still running {limit:?} after SIGTERM:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process's resident set size (VmRSS of /proc/<pid>/status), in KiB.
    pub fn vm_rss_kib(&self) -> u64 {
        self.proc_status_kib("VmRSS:")
    }

    /// The process's peak resident set size so far (VmHWM), in KiB.
    pub fn vm_hwm_kib(&self) -> u64 {
        self.proc_status_kib("VmHWM:")
    }

    fn proc_status_kib(&self, field: &str) -> u64 {
        let status = fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let line = status
            .lines()
            .find(|l| l.starts_with(field))
            .unwrap_or_else(|| panic!("no {field} in {status}"));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Whether the process is still running (it has not exited or crashed).
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(child) => child.try_wait().unwrap().is_none(),
            None => false,
        }
    }
}

impl Drop for TestBroker {
    fn drop(&mut self) {
        self.kill9();
        if std::thread::panicking() {
            // The tail of each log is enough to see what went wrong, and keeps the output
            // readable when a client was chatty.
            for (i, path) in self.logs.iter().enumerate() {
                let text = fs::read_to_string(path).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                let tail = &lines[lines.len().saturating_sub(200)..];
                eprintln!(
                    "--- kcli serve on port {} stderr, start {} (last {} lines) ---\n{}",
                    self.port,
                    i + 1,
                    tail.len(),
                    tail.join("\n")
                );
            }
        }
    }
}

/// Runs `cmd` to completion within `limit` (killed, and the test failed, after it); returns
/// (exit code, stdout, stderr). The pipes are drained by threads so a chatty client never
/// blocks; stdin is `input`.
pub fn run_within(mut cmd: Command, input: &[u8], limit: Duration) -> (i32, String, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e} (tests/run installs the tools the tests run)"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).map(|_| bytes)
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let err = stderr.join().unwrap().unwrap_or_default();
            panic!(
                "{cmd:?} ran longer than {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&err)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    feeder.join().unwrap();
    let text = |t: std::thread::JoinHandle<std::io::Result<Vec<u8>>>| {
        String::from_utf8_lossy(&t.join().unwrap().unwrap()).into_owned()
    };
    (status.code().unwrap_or(-1), text(stdout), text(stderr))
}

/// Per-read and per-write limit of [`KafkaConn`].
pub const IO_LIMIT: Duration = Duration::from_secs(10);

/// The client id a [`KafkaConn`] sends until told another.
const DEFAULT_CLIENT_ID: &str = "kcli-serve-test";

/// A blocking Kafka connection speaking the crate's codec.
pub struct KafkaConn {
    pub stream: TcpStream,
    next_correlation: i32,
    /// The `client_id` of every request header (`kcli-serve-test` unless set).
    client_id: String,
}

impl KafkaConn {
    pub fn connect(port: u16) -> KafkaConn {
        KafkaConn::connect_to(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
    }

    /// [`KafkaConn::connect`] to any address (a broker in a network namespace).
    pub fn connect_to(addr: SocketAddr) -> KafkaConn {
        let stream = TcpStream::connect_timeout(&addr, IO_LIMIT).unwrap();
        stream.set_read_timeout(Some(IO_LIMIT)).unwrap();
        stream.set_write_timeout(Some(IO_LIMIT)).unwrap();
        stream.set_nodelay(true).unwrap();
        KafkaConn {
            stream,
            next_correlation: 1,
            client_id: DEFAULT_CLIENT_ID.to_string(),
        }
    }

    /// A connection already open, whose next request gets `next_correlation`.
    pub fn from_stream(stream: TcpStream, next_correlation: i32) -> KafkaConn {
        stream.set_read_timeout(Some(IO_LIMIT)).unwrap();
        stream.set_write_timeout(Some(IO_LIMIT)).unwrap();
        KafkaConn {
            stream,
            next_correlation,
            client_id: DEFAULT_CLIENT_ID.to_string(),
        }
    }

    /// Sends the next requests with `client_id` in their headers (a client id's quotas).
    pub fn set_client_id(&mut self, client_id: &str) {
        self.client_id = client_id.to_string();
    }

    /// Writes `body` at `version`; returns its correlation id.
    pub fn send(&mut self, body: &RequestKind, version: i16) -> std::io::Result<i32> {
        let correlation_id = self.next_correlation;
        self.next_correlation += 1;
        let header = RequestHeader {
            request_api_key: body.api_key() as i16,
            request_api_version: version,
            correlation_id,
            client_id: Some(StrBytes::from(self.client_id.clone())),
            ..RequestHeader::default()
        };
        let frame = encode_request_frame(&header, body).unwrap();
        self.stream.write_all(&frame)?;
        Ok(correlation_id)
    }

    /// Reads one size-prefixed frame (without its prefix).
    pub fn recv_frame(&mut self) -> std::io::Result<Bytes> {
        read_frame(&mut self.stream)
    }

    /// Reads one response of `key` at `version`: its correlation id and body. The body must
    /// decode exactly, with no bytes left over.
    pub fn recv(&mut self, key: ApiKey, version: i16) -> std::io::Result<(i32, ResponseKind)> {
        let frame = self.recv_frame()?;
        Ok(decode_response(key, version, frame))
    }

    /// Sends and waits for the answer, which must carry the request's correlation id.
    pub fn call(&mut self, body: &RequestKind, version: i16) -> ResponseKind {
        let key = body.api_key();
        let sent = self
            .send(body, version)
            .unwrap_or_else(|e| panic!("{key:?} v{version}: send: {e}"));
        let (correlation_id, response) = self
            .recv(key, version)
            .unwrap_or_else(|e| panic!("{key:?} v{version}: no response: {e}"));
        assert_eq!(correlation_id, sent, "{key:?} v{version}: correlation id");
        response
    }
}

/// Reads a size-prefixed frame; the size must be sane (a response, not garbage).
pub fn read_frame(stream: &mut TcpStream) -> std::io::Result<Bytes> {
    let mut size = [0u8; 4];
    stream.read_exact(&mut size)?;
    let size = i32::from_be_bytes(size);
    assert!(
        (4..=256 << 20).contains(&size),
        "response frame of {size} bytes"
    );
    let mut frame = vec![0u8; size as usize];
    stream.read_exact(&mut frame)?;
    Ok(Bytes::from(frame))
}

/// Decodes a response frame (after its size prefix) of `key` at `version`: header of the
/// right version, then the body, which must use every byte.
pub fn decode_response(key: ApiKey, version: i16, frame: Bytes) -> (i32, ResponseKind) {
    let mut r = Reader::new(frame);
    let header = ResponseHeader::decode(&mut r, key.info().response_header_version(version))
        .unwrap_or_else(|e| panic!("{key:?} v{version}: response header: {e}"));
    let body = ResponseKind::decode(key, &mut r, version)
        .unwrap_or_else(|e| panic!("{key:?} v{version}: response body: {e}"));
    assert_eq!(
        r.remaining(),
        0,
        "{key:?} v{version}: bytes after the response"
    );
    (header.correlation_id, body)
}

/// Waits until the peer closes `stream` (EOF or reset), reading and discarding what comes;
/// false when it is still open after `limit`.
pub fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    while start.elapsed() < limit {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return true,
        }
    }
    false
}

/// Creates `topic` with CreateTopics (v7): `partitions` partitions of one replica, with the
/// topic `configs`; asserts it was created and returns its result (its topic id among it).
/// NOT_CONTROLLER is retried for up to 10 s.
pub fn create_topic_with(
    conn: &mut KafkaConn,
    topic: &str,
    partitions: i32,
    configs: &[(&str, &str)],
) -> kcli::protocol::messages::create_topics_response::CreatableTopicResult {
    use kcli::protocol::messages::create_topics_request::{
        CreatableTopic, CreatableTopicConfig, CreateTopicsRequest,
    };
    let request = RequestKind::CreateTopics(CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: StrBytes::from(topic),
            num_partitions: partitions,
            replication_factor: 1,
            configs: configs
                .iter()
                .map(|(k, v)| CreatableTopicConfig {
                    name: StrBytes::from(*k),
                    value: Some(StrBytes::from(*v)),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        timeout_ms: 10_000,
        ..Default::default()
    });
    // A broker on ZooKeeper takes a moment after its listener opens to win the controller
    // election; until then it answers NOT_CONTROLLER (41), which admin clients retry.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let ResponseKind::CreateTopics(mut r) = conn.call(&request, 7) else {
            unreachable!()
        };
        if r.topics[0].error_code == 41 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        assert_eq!(r.topics[0].error_code, 0, "{topic}: {r:?}");
        return r.topics.swap_remove(0);
    }
}

/// Metadata (v12) of `topic` with auto-creation allowed: the broker creates it with its
/// defaults (`num.partitions`, the `log.*` configs).
pub fn auto_create_request(topic: &str) -> RequestKind {
    use kcli::protocol::messages::metadata_request::{MetadataRequest, MetadataRequestTopic};
    RequestKind::Metadata(MetadataRequest {
        topics: Some(vec![MetadataRequestTopic {
            name: Some(StrBytes::from(topic)),
            ..Default::default()
        }]),
        allow_auto_topic_creation: true,
        ..Default::default()
    })
}

/// Creates `topic` through Metadata's auto-creation; asserts the topic was answered without
/// an error.
pub fn auto_create_topic(conn: &mut KafkaConn, topic: &str) {
    let ResponseKind::Metadata(md) = conn.call(&auto_create_request(topic), 12) else {
        unreachable!()
    };
    assert_eq!(md.topics[0].error_code, 0, "{md:?}");
}

/// The Produce and Fetch versions the raw helpers speak (both flexible, topics by name).
pub const PRODUCE_VERSION: i16 = 9;
pub const FETCH_VERSION: i16 = 12;

/// One uncompressed magic-2 batch of `values` (no keys), CreateTime now.
pub fn batch_of(values: &[Vec<u8>]) -> Vec<u8> {
    use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
    use kcli::protocol::record::compression::CompressionType;
    let now = now_ms();
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.records = values
        .iter()
        .map(|v| SimpleRecord::new(now, None, Some(v.clone())))
        .collect();
    b.build().unwrap()
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A Produce request of one batch to one partition.
pub fn produce_request(topic: &str, partition: i32, batch: Vec<u8>, acks: i16) -> RequestKind {
    use kcli::protocol::messages::produce_request::{
        PartitionProduceData, ProduceRequest, TopicProduceData,
    };
    RequestKind::Produce(ProduceRequest {
        acks,
        timeout_ms: 10_000,
        topic_data: vec![TopicProduceData {
            name: StrBytes::from(topic),
            partition_data: vec![PartitionProduceData {
                index: partition,
                records: Some(Bytes::from(batch)),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    })
}

/// The one partition's (error code, base offset) of a Produce response.
pub fn produce_result(response: &ResponseKind) -> (i16, i64) {
    let ResponseKind::Produce(p) = response else {
        panic!("not a Produce response: {response:?}")
    };
    let r = &p.responses[0].partition_responses[0];
    (r.error_code, r.base_offset)
}

/// One Fetch of `partition` from `offset` (no wait): (error code, high watermark, records).
pub fn fetch_once(
    conn: &mut KafkaConn,
    topic: &str,
    partition: i32,
    offset: i64,
) -> (i16, i64, Bytes) {
    use kcli::protocol::messages::fetch_request::{FetchPartition, FetchRequest, FetchTopic};
    let request = RequestKind::Fetch(FetchRequest {
        max_wait_ms: 0,
        min_bytes: 0,
        max_bytes: 8 << 20,
        session_epoch: -1,
        topics: vec![FetchTopic {
            topic: StrBytes::from(topic),
            partitions: vec![FetchPartition {
                partition,
                fetch_offset: offset,
                partition_max_bytes: 4 << 20,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::Fetch(f) = conn.call(&request, FETCH_VERSION) else {
        unreachable!()
    };
    assert_eq!(f.error_code, 0, "fetch: {f:?}");
    let p = &f.responses[0].partitions[0];
    (
        p.error_code,
        p.high_watermark,
        p.records.clone().unwrap_or_default(),
    )
}

/// Every record of a partition below its high watermark, read with raw Fetches from offset 0:
/// (offset, value) in order. Every batch must have a valid CRC and the offsets must be
/// contiguous from 0.
pub fn read_partition(conn: &mut KafkaConn, topic: &str, partition: i32) -> Vec<(i64, Vec<u8>)> {
    use kcli::protocol::record::batch::RecordBatchHeader;
    use kcli::protocol::record::batch_iter::BatchIter;
    use kcli::protocol::record::records::{batch_records, for_each_record};
    let mut out: Vec<(i64, Vec<u8>)> = Vec::new();
    let start = Instant::now();
    loop {
        let next = out.len() as i64;
        let (error, hw, records) = fetch_once(conn, topic, partition, next);
        assert_eq!(error, 0, "fetch {topic}-{partition} at {next}");
        if next >= hw {
            assert_eq!(
                next, hw,
                "{topic}-{partition}: read past the high watermark"
            );
            return out;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{topic}-{partition}: still reading after 60 s"
        );
        let mut progressed = false;
        for batch in BatchIter::new(&records) {
            let Ok(batch) = batch else { break };
            assert!(
                batch.is_valid(),
                "{topic}-{partition}: bad CRC in a fetched batch"
            );
            let header = RecordBatchHeader::parse(batch.bytes).unwrap();
            let body = batch_records(batch.bytes, &header, 64 << 20).unwrap();
            for_each_record(&body, header.records_count, |_, r| {
                let offset = r.offset(header.base_offset);
                if offset >= next && offset < hw {
                    assert_eq!(offset, out.len() as i64, "{topic}-{partition}: offset gap");
                    out.push((offset, r.value.unwrap_or_default().to_vec()));
                    progressed = true;
                }
            })
            .unwrap();
        }
        assert!(
            progressed,
            "{topic}-{partition}: no records at {next} below {hw}"
        );
    }
}

/// One uncompressed magic-2 batch of `values` (no keys), every record at `timestamp`.
pub fn batch_at(values: &[Vec<u8>], timestamp: i64) -> Vec<u8> {
    use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
    use kcli::protocol::record::compression::CompressionType;
    let mut b = RecordBatchBuilder::new(CompressionType::None);
    b.records = values
        .iter()
        .map(|v| SimpleRecord::new(timestamp, None, Some(v.clone())))
        .collect();
    b.build().unwrap()
}

/// ListOffsets v7 for one partition: (error code, offset, timestamp). `timestamp` is a time or
/// one of -1 (latest), -2 (earliest), -3 (max timestamp).
pub fn list_offset(
    conn: &mut KafkaConn,
    topic: &str,
    partition: i32,
    timestamp: i64,
) -> (i16, i64, i64) {
    use kcli::protocol::messages::list_offsets_request::{
        ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic,
    };
    let request = RequestKind::ListOffsets(ListOffsetsRequest {
        replica_id: -1,
        topics: vec![ListOffsetsTopic {
            name: StrBytes::from(topic),
            partitions: vec![ListOffsetsPartition {
                partition_index: partition,
                current_leader_epoch: -1,
                timestamp,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::ListOffsets(r) = conn.call(&request, 7) else {
        unreachable!()
    };
    let p = &r.topics[0].partitions[0];
    (p.error_code, p.offset, p.timestamp)
}

/// The headers of every batch in a partition directory's `.log` files, in order.
pub fn batch_headers(dir: &Path) -> Vec<kcli::protocol::record::batch::RecordBatchHeader> {
    use kcli::protocol::record::batch::RecordBatchHeader;
    use kcli::protocol::record::batch_iter::BatchIter;
    let mut logs: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    let mut out = Vec::new();
    for log in logs {
        let bytes = fs::read(&log).unwrap();
        for entry in BatchIter::new(&bytes) {
            out.push(RecordBatchHeader::parse(entry.unwrap().bytes).unwrap());
        }
    }
    out
}
