//! The admin APIs of `kcli serve` over the raw protocol, against the real binary: CreateTopics,
//! DeleteTopics, CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs,
//! DescribeCluster, DeleteRecords and OffsetForLeaderEpoch, each checked by its effect (create
//! then describe then alter then describe; delete records then ListOffsets earliest; dynamic
//! broker configs surviving a restart). Requests and responses go through the crate's own
//! codec. Each test starts its own broker on a free port with a temp dir and stops it by its
//! PID with SIGTERM, every wait bounded.
//!
//! This file holds the broker process, the connection and the request builders; the tests are
//! in `topics`, `records` and `brokers`.

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kcli::protocol::codec::{Message, Reader, StrBytes, Uuid};
use kcli::protocol::messages::alter_configs_request as ac;
use kcli::protocol::messages::create_partitions_request as cp;
use kcli::protocol::messages::create_topics_request as ct;
use kcli::protocol::messages::create_topics_response::CreatableTopicResult;
use kcli::protocol::messages::delete_records_request as dr;
use kcli::protocol::messages::delete_topics_request as dt;
use kcli::protocol::messages::describe_cluster_request::DescribeClusterRequest;
use kcli::protocol::messages::describe_configs_request as dc;
use kcli::protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult,
};
use kcli::protocol::messages::incremental_alter_configs_request as iac;
use kcli::protocol::messages::list_offsets_request as lo;
use kcli::protocol::messages::metadata_request::{MetadataRequest, MetadataRequestTopic};
use kcli::protocol::messages::offset_for_leader_epoch_request as ofle;
use kcli::protocol::messages::produce_request as pr;
use kcli::protocol::messages::{
    RequestHeader, RequestKind, ResponseHeader, ResponseKind, encode_request_frame,
};
use kcli::protocol::record::builder::{RecordBatchBuilder, SimpleRecord};
use kcli::protocol::record::compression::CompressionType;

const LIMIT: Duration = Duration::from_secs(30);
const TOPIC: i8 = 2;
const BROKER: i8 = 4;
const SET: i8 = 0;
const DELETE: i8 = 1;
const APPEND: i8 = 2;
const SUBTRACT: i8 = 3;

/// A `kcli serve` process on 127.0.0.1; SIGKILLed on drop if a test failed before `stop`.
struct Broker {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    overrides: Vec<String>,
    log: PathBuf,
}

impl Broker {
    fn start(overrides: &[&str]) -> Broker {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("stderr.log");
        let mut b = Broker {
            child: None,
            port: 0,
            dir,
            overrides: overrides.iter().map(|s| s.to_string()).collect(),
            log,
        };
        for attempt in 0..5 {
            b.port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            if b.spawn() {
                return b;
            }
            assert!(attempt < 4, "kcli serve did not start:\n{}", b.stderr());
        }
        unreachable!()
    }

    /// Starts the process and waits until its port accepts; false if it exited first (the
    /// port was taken meanwhile).
    fn spawn(&mut self) -> bool {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcli"));
        cmd.arg("serve")
            .arg("--override")
            .arg(format!("listeners=PLAINTEXT://127.0.0.1:{}", self.port))
            .arg("--override")
            .arg(format!(
                "log.dirs={}",
                self.dir.path().join("data").display()
            ));
        for o in &self.overrides {
            cmd.arg("--override").arg(o);
        }
        let child = cmd
            .env("RUST_LOG", "warn,kcli=info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(fs::File::create(&self.log).unwrap()))
            .spawn()
            .unwrap();
        self.child = Some(child);
        let start = Instant::now();
        while start.elapsed() < LIMIT {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                self.child = None;
                eprintln!("kcli serve exited with {status}:\n{}", self.stderr());
                return false;
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "kcli serve not accepting after {LIMIT:?}:\n{}",
            self.stderr()
        );
    }

    fn stderr(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn connect(&self) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(LIMIT)).unwrap();
        stream.set_write_timeout(Some(LIMIT)).unwrap();
        Conn {
            stream,
            correlation_id: 0,
        }
    }

    /// SIGTERM by PID, then a clean exit within the limit.
    fn stop(&mut self) {
        let mut child = self.child.take().expect("broker is running");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                assert!(status.success(), "exit {status}:\n{}", self.stderr());
                return;
            }
            if start.elapsed() > LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                panic!("kcli serve still running after SIGTERM:\n{}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn restart(&mut self) {
        assert!(
            self.spawn(),
            "kcli serve did not restart:\n{}",
            self.stderr()
        );
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            eprintln!("kcli serve stderr:\n{}", self.stderr());
        }
    }
}

struct Conn {
    stream: TcpStream,
    correlation_id: i32,
}

impl Conn {
    fn call(&mut self, body: RequestKind, version: i16) -> ResponseKind {
        self.correlation_id += 1;
        let key = body.api_key();
        let header = RequestHeader {
            request_api_key: key as i16,
            request_api_version: version,
            correlation_id: self.correlation_id,
            client_id: Some(StrBytes::from("serve-admin-raw")),
            ..RequestHeader::default()
        };
        self.stream
            .write_all(&encode_request_frame(&header, &body).unwrap())
            .unwrap();
        let mut size = [0u8; 4];
        self.stream
            .read_exact(&mut size)
            .unwrap_or_else(|e| panic!("{key:?} v{version}: no response: {e}"));
        let mut frame = vec![0u8; usize::try_from(i32::from_be_bytes(size)).unwrap()];
        self.stream.read_exact(&mut frame).unwrap();
        let mut r = Reader::new(Bytes::from(frame));
        let h =
            ResponseHeader::decode(&mut r, key.info().response_header_version(version)).unwrap();
        assert_eq!(h.correlation_id, self.correlation_id);
        let response = ResponseKind::decode(key, &mut r, version).unwrap();
        assert_eq!(r.remaining(), 0, "{key:?} v{version}: bytes left");
        response
    }
}

fn s(text: &str) -> StrBytes {
    StrBytes::from(text)
}

fn text(b: &Option<StrBytes>) -> Option<String> {
    b.as_ref().map(|b| b.to_string())
}

// ---- request builders --------------------------------------------------------------------

fn new_topic(
    name: &str,
    partitions: i32,
    rf: i16,
    configs: &[(&str, Option<&str>)],
) -> ct::CreatableTopic {
    ct::CreatableTopic {
        name: s(name),
        num_partitions: partitions,
        replication_factor: rf,
        configs: configs
            .iter()
            .map(|(k, v)| ct::CreatableTopicConfig {
                name: s(k),
                value: v.map(s),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn create(
    c: &mut Conn,
    v: i16,
    topics: Vec<ct::CreatableTopic>,
    timeout_ms: i32,
    validate_only: bool,
) -> Vec<CreatableTopicResult> {
    let body = RequestKind::CreateTopics(ct::CreateTopicsRequest {
        topics,
        timeout_ms,
        validate_only,
        ..Default::default()
    });
    let ResponseKind::CreateTopics(r) = c.call(body, v) else {
        panic!()
    };
    r.topics
}

fn describe(
    c: &mut Conn,
    v: i16,
    kind: i8,
    name: &str,
    keys: Option<&[&str]>,
) -> DescribeConfigsResult {
    let body = RequestKind::DescribeConfigs(dc::DescribeConfigsRequest {
        resources: vec![dc::DescribeConfigsResource {
            resource_type: kind,
            resource_name: s(name),
            configuration_keys: keys.map(|k| k.iter().map(|k| s(k)).collect()),
            ..Default::default()
        }],
        include_synonyms: v >= 1,
        include_documentation: v >= 3,
        ..Default::default()
    });
    let ResponseKind::DescribeConfigs(mut r) = c.call(body, v) else {
        panic!()
    };
    r.results.remove(0)
}

fn entry<'a>(r: &'a DescribeConfigsResult, name: &str) -> &'a DescribeConfigsResourceResult {
    r.configs
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("{name} not described: {r:?}"))
}

/// (value, source) of a described config.
fn value_source(c: &mut Conn, kind: i8, name: &str, key: &str) -> (Option<String>, i8) {
    let r = describe(c, 4, kind, name, Some(&[key]));
    assert_eq!(r.error_code, 0, "{r:?}");
    let e = entry(&r, key);
    (text(&e.value), e.config_source)
}

fn alter(
    c: &mut Conn,
    kind: i8,
    name: &str,
    configs: &[(&str, Option<&str>)],
    validate_only: bool,
) -> Vec<(i16, Option<String>)> {
    let body = RequestKind::AlterConfigs(ac::AlterConfigsRequest {
        resources: vec![ac::AlterConfigsResource {
            resource_type: kind,
            resource_name: s(name),
            configs: configs
                .iter()
                .map(|(k, v)| ac::AlterableConfig {
                    name: s(k),
                    value: v.map(s),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        validate_only,
        ..Default::default()
    });
    let ResponseKind::AlterConfigs(r) = c.call(body, 2) else {
        panic!()
    };
    r.responses
        .iter()
        .map(|r| (r.error_code, text(&r.error_message)))
        .collect()
}

fn incremental(
    c: &mut Conn,
    kind: i8,
    name: &str,
    ops: &[(&str, i8, Option<&str>)],
) -> (i16, Option<String>) {
    let body = RequestKind::IncrementalAlterConfigs(iac::IncrementalAlterConfigsRequest {
        resources: vec![iac::AlterConfigsResource {
            resource_type: kind,
            resource_name: s(name),
            configs: ops
                .iter()
                .map(|(k, op, v)| iac::AlterableConfig {
                    name: s(k),
                    config_operation: *op,
                    value: v.map(s),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    });
    let ResponseKind::IncrementalAlterConfigs(r) = c.call(body, 1) else {
        panic!()
    };
    (
        r.responses[0].error_code,
        text(&r.responses[0].error_message),
    )
}

/// (error code, partition count, topic id) of a topic, by Metadata v12 without auto-creation.
fn metadata(c: &mut Conn, topic: &str) -> (i16, usize, Uuid) {
    let body = RequestKind::Metadata(MetadataRequest {
        topics: Some(vec![MetadataRequestTopic {
            name: Some(s(topic)),
            ..Default::default()
        }]),
        allow_auto_topic_creation: false,
        ..Default::default()
    });
    let ResponseKind::Metadata(r) = c.call(body, 12) else {
        panic!()
    };
    let t = &r.topics[0];
    (t.error_code, t.partitions.len(), t.topic_id)
}

fn create_partitions(
    c: &mut Conn,
    topic: &str,
    count: i32,
    assignments: Option<Vec<Vec<i32>>>,
    validate_only: bool,
) -> (i16, Option<String>) {
    let body = RequestKind::CreatePartitions(cp::CreatePartitionsRequest {
        topics: vec![cp::CreatePartitionsTopic {
            name: s(topic),
            count,
            assignments: assignments.map(|a| {
                a.into_iter()
                    .map(|broker_ids| cp::CreatePartitionsAssignment {
                        broker_ids,
                        ..Default::default()
                    })
                    .collect()
            }),
            ..Default::default()
        }],
        timeout_ms: 10_000,
        validate_only,
        ..Default::default()
    });
    let ResponseKind::CreatePartitions(r) = c.call(body, 3) else {
        panic!()
    };
    (r.results[0].error_code, text(&r.results[0].error_message))
}

fn delete_topics_v6(c: &mut Conn, topics: &[(Option<&str>, Uuid)]) -> Vec<(Option<String>, i16)> {
    let body = RequestKind::DeleteTopics(dt::DeleteTopicsRequest {
        topics: topics
            .iter()
            .map(|(name, id)| dt::DeleteTopicState {
                name: name.map(s),
                topic_id: *id,
                ..Default::default()
            })
            .collect(),
        timeout_ms: 10_000,
        ..Default::default()
    });
    let ResponseKind::DeleteTopics(r) = c.call(body, 6) else {
        panic!()
    };
    r.responses
        .iter()
        .map(|r| (text(&r.name), r.error_code))
        .collect()
}

fn delete_topics_by_name(c: &mut Conn, v: i16, names: &[&str]) -> Vec<i16> {
    let body = RequestKind::DeleteTopics(dt::DeleteTopicsRequest {
        topic_names: names.iter().map(|n| s(n)).collect(),
        timeout_ms: 10_000,
        ..Default::default()
    });
    let ResponseKind::DeleteTopics(r) = c.call(body, v) else {
        panic!()
    };
    r.responses.iter().map(|r| r.error_code).collect()
}

mod brokers;
mod records;
mod topics;
