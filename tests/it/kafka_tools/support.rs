//! The harness of the `kafka_tools` tests: a [`Session`] runs Kafka 3.9.1's command-line tools
//! (their main classes under `java -cp '.tools/kafka-3.9.1/*'`, one JVM at a time, small heaps,
//! each under a time limit) against one broker and keeps a transcript of every step. Against
//! `kcli serve` (a [`TestBroker`]) the transcript is compared, step by step and line by line, with
//! the golden one that tests/record-kafka-tools made against Apache Kafka 3.9.1 in ZooKeeper
//! mode, after [`normalise`] has replaced what differs between any two runs (ids, timestamps,
//! ports). With `KCLI_KAFKA_TOOLS_REFERENCE=host:port` set (only that script sets it) the steps
//! run against that broker instead and the transcript is written as the new golden file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::serve_support::{TestBroker, run_within};

/// How long one tool may run: a JVM start is 1-2 s, but the machine is shared.
const TOOL_LIMIT: Duration = Duration::from_secs(120);

/// The broker settings of both sides (tests/record-kafka-tools gives Kafka the same ones), so
/// a group needs no initial rebalance delay and `__consumer_offsets` is one partition.
pub const BROKER: &[(&str, &str)] = &[
    ("group.initial.rebalance.delay.ms", "0"),
    ("offsets.topic.num.partitions", "1"),
    ("offsets.topic.replication.factor", "1"),
];

pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn kafka_classpath() -> String {
    let dir = repo().join(".tools/kafka-3.9.1");
    assert!(
        dir.join("kafka-tools-3.9.1.jar").exists(),
        "Kafka 3.9.1's tools are missing from {}: run tests/install-kafka-tools",
        dir.display()
    );
    format!("{}/*", dir.display())
}

/// A `java` command for `class` with the small heap and fast start every tool gets.
pub fn java(class: &str) -> Command {
    let mut cmd = Command::new("java");
    cmd.args([
        "-Xmx256m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Xshare:auto",
        "-Dfile.encoding=UTF-8",
        "-Dstdout.encoding=UTF-8",
        "-Dstderr.encoding=UTF-8",
        "-cp",
        &kafka_classpath(),
        class,
    ]);
    cmd
}

/// What one run of a tool printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

struct Step {
    title: String,
    command: String,
    out: Out,
}

/// One broker and the transcript of the tools run against it.
pub struct Session {
    name: &'static str,
    broker: Option<TestBroker>,
    bootstrap: String,
    scratch: tempfile::TempDir,
    steps: Vec<Step>,
}

impl Session {
    /// A session named after its golden file, `tests/fixtures/kafka-tools/<name>.txt`.
    pub fn start(name: &'static str) -> Session {
        let (broker, bootstrap) = match std::env::var("KCLI_KAFKA_TOOLS_REFERENCE") {
            Ok(bootstrap) => (None, bootstrap),
            Err(_) => {
                let broker = TestBroker::start(BROKER);
                let bootstrap = broker.bootstrap();
                (Some(broker), bootstrap)
            }
        };
        Session {
            name,
            broker,
            bootstrap,
            scratch: tempfile::tempdir().unwrap(),
            steps: Vec::new(),
        }
    }

    pub fn bootstrap(&self) -> &str {
        &self.bootstrap
    }

    pub fn port(&self) -> u16 {
        self.bootstrap.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// A scratch dir for the test's files (offset JSON, kcat's output).
    pub fn scratch(&self) -> &Path {
        self.scratch.path()
    }

    /// Runs `class` with `args` (`{bootstrap}` replaced by the broker's address, `{scratch}` by
    /// the scratch dir) and `stdin`, records the step under `title` and returns what it printed.
    pub fn tool(&mut self, title: &str, class: &str, args: &[&str], stdin: &str) -> Out {
        self.run(title, class, args, stdin, false)
    }

    /// [`Session::tool`] for the perf tools: their figures (rates, latencies, times) are
    /// recorded as `N`, since no two runs agree on them; the returned output keeps them.
    pub fn tool_figures(&mut self, title: &str, class: &str, args: &[&str], stdin: &str) -> Out {
        self.run(title, class, args, stdin, true)
    }

    fn run(&mut self, title: &str, class: &str, args: &[&str], stdin: &str, figures: bool) -> Out {
        let scratch = self.scratch.path().display().to_string();
        let mut cmd = java(class);
        for a in args {
            cmd.arg(
                a.replace("{bootstrap}", &self.bootstrap)
                    .replace("{scratch}", &scratch),
            );
        }
        let (code, stdout, stderr) = run_within(cmd, stdin.as_bytes(), TOOL_LIMIT);
        let out = Out {
            code,
            stdout,
            stderr,
        };
        let code = out.code;
        let short = class.rsplit('.').next().unwrap_or(class);
        self.steps.push(Step {
            title: title.to_string(),
            command: format!("{short} {}", args.join(" ")),
            out: if figures {
                Out {
                    code,
                    stdout: without_numbers(&out.stdout),
                    stderr: without_numbers(&out.stderr),
                }
            } else {
                out.clone()
            },
        });
        out
    }

    /// Compares the transcript with the golden file (every differing step is reported), or
    /// writes it in recording mode.
    pub fn finish(mut self) {
        let path = golden_path(self.name);
        let text = render(&self.steps);
        if self.broker.is_none() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            return;
        }
        let golden = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (tests/record-kafka-tools makes it)",
                path.display()
            )
        });
        let expected = parse(&golden);
        let actual = parse(&text);
        let mut report = String::new();
        for i in 0..expected.len().max(actual.len()) {
            let (e, a) = (expected.get(i), actual.get(i));
            if e.map(|s| normalise(s)) != a.map(|s| normalise(s)) {
                let _ = writeln!(
                    report,
                    "=== step {i} differs\n--- Kafka 3.9.1:\n{}\n--- kcli:\n{}",
                    e.map(String::as_str).unwrap_or("(none)"),
                    a.map(String::as_str).unwrap_or("(none)")
                );
            }
        }
        if !report.is_empty() {
            let stderr = self.broker.as_ref().map(TestBroker::stderr);
            panic!(
                "{} differs from {}:\n{report}\n{}",
                self.name,
                path.display(),
                stderr.unwrap_or_default()
            );
        }
        if let Some(broker) = self.broker.as_mut() {
            broker.stop();
        }
    }
}

fn golden_path(name: &str) -> PathBuf {
    repo().join(format!("tests/fixtures/kafka-tools/{name}.txt"))
}

const MARK: &str = "#### ";

/// The transcript's text: per step a title line, the command, stdout, stderr and the exit
/// status, each after a `#### ` marker line.
fn render(steps: &[Step]) -> String {
    let mut text = String::new();
    let block = |text: &mut String, s: &str| {
        text.push_str(s);
        if !s.is_empty() && !s.ends_with('\n') {
            text.push('\n');
        }
    };
    for s in steps {
        let _ = writeln!(text, "{MARK}step: {}\n$ {}", s.title, s.command);
        let _ = writeln!(text, "{MARK}stdout");
        block(&mut text, &s.out.stdout);
        let _ = writeln!(text, "{MARK}stderr");
        block(&mut text, &s.out.stderr);
        let _ = writeln!(text, "{MARK}exit {}", s.out.code);
    }
    text
}

/// The transcript's steps, each as its text from its title line to its exit status.
fn parse(text: &str) -> Vec<String> {
    let mut steps = Vec::new();
    for line in text.lines() {
        if line.starts_with(&format!("{MARK}step: ")) {
            steps.push(String::new());
        }
        if let Some(step) = steps.last_mut() {
            step.push_str(line);
            step.push('\n');
        }
    }
    steps
}

/// Replaces what differs between any two runs, on either broker: UUIDs (member ids), topic
/// ids, `host:port`s, record timestamps and `perf-consumer-<n>` group ids.
pub fn normalise(text: &str) -> String {
    let text = replace_after(text, "127.0.0.1:", |c| c.is_ascii_digit(), "<port>");
    let text = replace_after(&text, "localhost:", |c| c.is_ascii_digit(), "<port>");
    let text = replace_after(&text, "TopicId: ", is_base64url, "<topic-id>");
    let text = replace_after(&text, "CreateTime:", |c| c.is_ascii_digit(), "<ts>");
    let text = replace_after(&text, "LogAppendTime:", |c| c.is_ascii_digit(), "<ts>");
    let text = replace_after(&text, "perf-consumer-", |c| c.is_ascii_digit(), "<n>");
    replace_uuids(&text)
}

fn is_base64url(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// Replaces the run of `keep`-characters after each `prefix` by `with`.
fn replace_after(text: &str, prefix: &str, keep: impl Fn(char) -> bool, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        out.push_str(&rest[..at + prefix.len()]);
        rest = &rest[at + prefix.len()..];
        let end = rest.find(|c: char| !keep(c)).unwrap_or(rest.len());
        if end > 0 {
            out.push_str(with);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Replaces every `8-4-4-4-12` hex UUID by `<uuid>`.
fn replace_uuids(text: &str) -> String {
    const SHAPE: [usize; 5] = [8, 4, 4, 4, 12];
    let bytes = text.as_bytes();
    let matches_at = |i: usize| {
        let mut p = i;
        for (n, len) in SHAPE.iter().enumerate() {
            if n > 0 {
                if bytes.get(p) != Some(&b'-') {
                    return None;
                }
                p += 1;
            }
            for _ in 0..*len {
                if !bytes.get(p).is_some_and(u8::is_ascii_hexdigit) {
                    return None;
                }
                p += 1;
            }
        }
        Some(p)
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if let Some(end) = matches_at(i) {
            out.push_str("<uuid>");
            i = end;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Every number (digits, with a fraction) replaced by `N`: for the perf tools' figures.
pub fn without_numbers(text: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() || (in_number && c == '.') {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

#[test]
fn normalise_replaces_ids_ports_and_timestamps() {
    assert_eq!(
        normalise(
            "Topic: t\tTopicId: JHR_EwWAT5C8d_iJGOLvlA\tx\n\
             consumer-g-1-0f7e3a4c-9c1d-4a41-8d2e-1b0a7c9d2e3f /127.0.0.1 127.0.0.1:9092\n\
             CreateTime:1764606000000\tk"
        ),
        "Topic: t\tTopicId: <topic-id>\tx\nconsumer-g-1-<uuid> /127.0.0.1 127.0.0.1:<port>\n\
         CreateTime:<ts>\tk"
    );
    assert_eq!(
        without_numbers("1000 records sent, 12.5 ms"),
        "N records sent, N ms"
    );
}
