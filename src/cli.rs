//! The command line, as clap types only: no behaviour lives here. Every flag carries a doc
//! comment, which is its `--help` text. A command appears here only once it works.
// Those comments are written for the terminal, where `[/chroot]` and `<default>` are literal.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use clap::{Parser, Subcommand, ValueEnum};

/// A Kafka-compatible broker and an admin/inspection toolkit for Kafka's on-disk and ZooKeeper
/// formats.
#[derive(Debug, Parser)]
#[command(name = "kcli", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// How log lines are written to stderr: text (coloured only when stderr is a terminal and
    /// NO_COLOR is unset) or json (one JSON object per line, for log shippers).
    #[arg(
        long,
        global = true,
        value_enum,
        env = "KCLI_LOG_FORMAT",
        default_value_t = LogFormat::Text
    )]
    pub log_format: LogFormat,
}

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One line per event: time, level, module, message, fields.
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `message` and the event's
    /// fields at the top level, and the spans it is in.
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List, add and remove ACLs, stored as Kafka's AclAuthorizer stores them in ZooKeeper
    /// (/kafka-acl, /kafka-acl-extended), through ZooKeeper (--zookeeper, as `kafka-acls
    /// --authorizer-properties zookeeper.connect=...`) or through a broker (--bootstrap-server,
    /// the DescribeAcls, CreateAcls and DeleteAcls APIs).
    ///
    /// Every change writes a change notification, so running brokers apply it within seconds
    /// (docs/acls.md). Exits 2 on an error, naming the flag, ACL or broker at fault.
    #[command(subcommand)]
    Acls(AclsCommand),
    /// Compute partition assignments with Kafka's algorithm, rack-aware with --racks, offline or
    /// for the live cluster, and start, verify or cancel reassignments (docs/assign.md).
    ///
    /// Without --execute, --verify or --cancel it proposes: a table of partitions with their
    /// replicas and racks, the balance per broker and per rack, and Kafka's reassignment JSON
    /// (alone, with --format json). The start index and replica shift drawn are always printed
    /// (on stderr with --format json), so a proposal can be repeated. Exits 1 when --verify
    /// finds a partition not yet as the file asks, 2 on an error.
    Assign(AssignArgs),
    /// Print shell completions for kcli to stdout.
    Completions(CompletionsArgs),
    /// Show the cluster as ZooKeeper records it: brokers, the controller, topics and every
    /// partition's leader, ISR and health flags (OFFLINE, UNDER-REPLICATED, UNDER-MIN-ISR,
    /// PREFERRED-NOT-LEADER, RECOVERING, REASSIGNING, MARKED-FOR-DELETION).
    ///
    /// Reads ZooKeeper (--zookeeper, working with every broker down), a single-node broker's
    /// embedded store on disk (--data-dir) or a live broker (--bootstrap-server); what each
    /// cannot know is left out (docs/describe-cluster.md). Exits 1 when a partition shown is
    /// OFFLINE or UNDER-MIN-ISR, 2 on an error.
    DescribeCluster(DescribeClusterArgs),
    /// Dump Kafka log segments, indexes, producer snapshots and transaction indexes, as Kafka's
    /// `kafka-dump-log.sh` (DumpLogSegments) prints them, or as JSON Lines or a summary table.
    DumpSegment(DumpSegmentArgs),
    /// Rebuild or verify the .index and .timeindex files of log segments.
    ///
    /// PATH is a segment's .log file, a partition directory or a whole log dir. The indexes are
    /// rebuilt from the .log files with the rule a broker's recovery uses (docs/rebuild-index.md).
    RebuildIndex(RebuildIndexArgs),
    /// List, add and remove users' SCRAM credentials, stored as Kafka stores them in
    /// ZooKeeper's /config/users, through ZooKeeper (--zookeeper, as `kafka-configs
    /// --zookeeper`) or through a broker (--bootstrap-server, the SCRAM credential APIs).
    ///
    /// Secrets are never printed: a listing shows mechanisms and iteration counts only
    /// (docs/users.md). Exits 2 on an error, naming the user, flag or broker at fault.
    #[command(subcommand)]
    Users(UsersCommand),
    /// Run a Kafka broker: a single node on 127.0.0.1:9092 with data in ./kcli-data, its
    /// cluster metadata kept in an embedded store in the first log dir. Stop it with Ctrl-C or
    /// SIGTERM for a clean shutdown.
    Serve(ServeArgs),
}

/// `kcli serve`: Kafka's own way of configuring a broker, a `server.properties` file and
/// `--override key=value`, with Kafka's key names and defaults (docs/configuration.md).
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// A `server.properties` file in Kafka's format.
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
    /// Set one broker config, overriding the file (repeatable), e.g.
    /// `--override listeners=PLAINTEXT://127.0.0.1:9093`.
    #[arg(long = "override", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Join the cluster coordinated by this ZooKeeper ensemble: shorthand for
    /// `--override zookeeper.connect=HOST:PORT[,HOST:PORT...][/chroot]` (the chroot is created
    /// when missing). Without it, and without `zookeeper.connect`, the broker keeps its
    /// metadata in an embedded store and runs as a single-node cluster.
    #[arg(long, value_name = "HOST:PORT[/CHROOT]")]
    pub zookeeper: Option<String>,
}

/// `kcli assign`: Kafka's `AdminUtils.assignReplicasToBrokers` and
/// `kafka-reassign-partitions.sh` in one command.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("source").args(["zookeeper", "bootstrap_server"]).multiple(true)))]
#[command(group(
    clap::ArgGroup::new("action")
        .args(["execute", "verify", "cancel"])
        .requires("source")
        .conflicts_with_all([
            "brokers", "racks", "partitions", "replication_factor", "start_index",
            "replica_shift", "seed", "topic", "topics_to_move_json", "broker_list",
            "minimize_movement", "format",
        ])
))]
pub struct AssignArgs {
    /// The brokers to assign to, without a cluster: comma-separated ids. May be omitted with
    /// --racks, which then names them.
    #[arg(long, value_name = "ID,...", value_delimiter = ',', conflicts_with_all = ["zookeeper", "bootstrap_server"])]
    pub brokers: Vec<i32>,
    /// Each broker's rack, without a cluster: comma-separated BROKER:RACK pairs, e.g.
    /// `0:r1,1:r3,2:r3`. Brokers of --brokers not named here have no rack.
    #[arg(long, value_name = "ID:RACK,...", conflicts_with_all = ["zookeeper", "bootstrap_server"])]
    pub racks: Option<String>,
    /// Partitions of the new topic to assign.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(1..), conflicts_with = "topics_to_move_json")]
    pub partitions: Option<i32>,
    /// Replicas per partition of the new topic.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(1..), conflicts_with = "topics_to_move_json")]
    pub replication_factor: Option<i32>,
    /// How racks are used, with Kafka's meaning: enforced (every broker has a rack or none
    /// has; only some is an error), safe (racks only when every broker has one), disabled.
    #[arg(long, value_enum, default_value_t = RackAwareModeArg::Enforced)]
    pub rack_aware_mode: RackAwareModeArg,
    /// Fix the start index (the first partition's leader in the broker list) and, as Kafka's
    /// fixed start index does, the replica shift too.
    #[arg(long, value_name = "N")]
    pub start_index: Option<usize>,
    /// Fix the replica shift alone (the distance of the second replica from the first).
    #[arg(long, value_name = "N")]
    pub replica_shift: Option<usize>,
    /// Seed the random draws of start index and shift (java.util.Random's generator), so they
    /// can be repeated; without it a seed is drawn and printed.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub seed: Option<i64>,
    /// The new topic's name in the output.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "topic",
        conflicts_with = "topics_to_move_json"
    )]
    pub topic: String,
    /// Output format: tables and Kafka's JSON, or the proposal's reassignment JSON alone.
    #[arg(long, value_enum, default_value_t = AssignFormat::Text)]
    pub format: AssignFormat,
    /// Take brokers, racks and topics from this ZooKeeper ensemble (Kafka's zookeeper.connect:
    /// HOST:PORT[,HOST:PORT...][/chroot]); with an action, start or verify through it
    /// (/admin/reassign_partitions).
    #[arg(long, value_name = "HOST:PORT[/CHROOT]")]
    pub zookeeper: Option<String>,
    /// Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: brokers,
    /// racks and topics from Metadata (unless --zookeeper is given), partition sizes for the
    /// bytes moved, and the controller for --execute, --verify and --cancel.
    #[arg(long, value_name = "HOST:PORT[,...]")]
    pub bootstrap_server: Option<String>,
    /// Propose new assignments for these existing topics: Kafka's
    /// `{"topics":[{"topic":"foo"}],"version":1}`.
    #[arg(long, value_name = "FILE", alias = "topics-to-move-json-file")]
    pub topics_to_move_json: Option<std::path::PathBuf>,
    /// Assign only to these of the cluster's brokers (comma-separated ids).
    #[arg(long, value_name = "ID,...")]
    pub broker_list: Option<String>,
    /// With --topics-to-move-json: meet the rack and balance constraints of Kafka's proposal
    /// (same draws) while moving as few replicas as possible, and nothing when the current
    /// assignment already meets them.
    #[arg(long, requires = "topics_to_move_json")]
    pub minimize_movement: bool,
    /// Start the reassignment in --reassignment-json, after printing the current assignment
    /// for a rollback.
    #[arg(long, requires = "reassignment_json")]
    pub execute: bool,
    /// Report each partition of --reassignment-json as completed or still in progress; exit 1
    /// unless all are completed.
    #[arg(long, requires = "reassignment_json")]
    pub verify: bool,
    /// With --verify: leave the replication throttles in place even when no move is in
    /// progress (Kafka's --preserve-throttles).
    #[arg(long, requires = "verify")]
    pub preserve_throttles: bool,
    /// Cancel the reassignments in progress of the partitions in --reassignment-json (needs
    /// --bootstrap-server: ZooKeeper's znode cannot cancel).
    #[arg(long, requires_all = ["reassignment_json", "bootstrap_server"])]
    pub cancel: bool,
    /// The reassignment, in Kafka's reassignment JSON (what --format json prints).
    #[arg(
        long,
        value_name = "FILE",
        alias = "reassignment-json-file",
        requires = "action"
    )]
    pub reassignment_json: Option<std::path::PathBuf>,
    /// With --execute: start even though other reassignments are in progress.
    #[arg(long, requires = "execute")]
    pub additional: bool,
    /// With --execute: throttle the moves' replication to this many bytes per second (sets
    /// `leader.replication.throttled.rate` and `follower.replication.throttled.rate` on every
    /// broker a move touches, and the topics' throttled replicas, as Kafka's tool does);
    /// --verify removes them once no move is in progress.
    #[arg(long, value_name = "BYTES_PER_SECOND", requires_all = ["execute", "bootstrap_server"],
          value_parser = clap::value_parser!(i64).range(0..))]
    pub throttle: Option<i64>,
    /// How long to wait for ZooKeeper or a broker to connect and answer, in ms.
    #[arg(long, value_name = "MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub connection_timeout_ms: u64,
}

/// `--rack-aware-mode` (Kafka's `RackAwareMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RackAwareModeArg {
    /// Every broker has a rack or none has.
    Enforced,
    /// Racks only when every broker has one.
    Safe,
    /// Racks ignored.
    Disabled,
}

/// Output formats of `kcli assign`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AssignFormat {
    /// Tables, the balance summary and Kafka's JSON.
    Text,
    /// The proposal's reassignment JSON alone on stdout; the rest on stderr.
    Json,
}

/// `kcli users`: SCRAM credential administration.
#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// List the users with SCRAM credentials (or the named ones): mechanism and iterations, and their quotas.
    List(UsersListArgs),
    /// Set a user's credential for one mechanism from a password, replacing any the user had
    /// for that mechanism and keeping the user's other config (other mechanisms, quotas).
    Add(UsersAddArgs),
    /// Remove a user's credential for one mechanism, or (without --mechanism) all of them.
    Remove(UsersRemoveArgs),
}

/// Where `kcli users` reads and writes the credentials: exactly one of the two.
#[derive(Debug, clap::Args)]
#[group(id = "users_source", required = true, multiple = false)]
pub struct UsersSourceArgs {
    /// The ZooKeeper ensemble, as Kafka's `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot].
    /// Writes `/config/users/<user>` and a `/config/changes` notification, as Kafka's
    /// `kafka-configs --zookeeper` does; works with every broker down.
    #[arg(long, value_name = "HOST:PORT[/CHROOT]")]
    pub zookeeper: Option<String>,
    /// Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked:
    /// DescribeUserScramCredentials there, AlterUserScramCredentials at the controller.
    #[arg(long, value_name = "HOST:PORT[,...]")]
    pub bootstrap_server: Option<String>,
}

/// Options every `kcli users` command takes.
#[derive(Debug, clap::Args)]
pub struct UsersCommonArgs {
    #[command(flatten)]
    pub source: UsersSourceArgs,
    /// Output format: a table or one line of text, or one JSON document (docs/users.md).
    #[arg(long, value_enum, default_value_t = UsersFormat::Text)]
    pub format: UsersFormat,
    /// How long to wait for ZooKeeper or a broker to connect and answer, in ms.
    #[arg(long, value_name = "MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub connection_timeout_ms: u64,
}

/// `kcli users list`.
#[derive(Debug, clap::Args)]
pub struct UsersListArgs {
    /// Show only these users; one without a SCRAM credential is an error.
    #[arg(value_name = "USER")]
    pub users: Vec<String>,
    #[command(flatten)]
    pub common: UsersCommonArgs,
}

/// `kcli users add`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("password").required(true).args(["password_file", "password_stdin"])))]
pub struct UsersAddArgs {
    /// The user name, as the client authenticates (e.g. `alice`).
    #[arg(value_name = "USER")]
    pub user: String,
    /// The SCRAM mechanism of the credential.
    #[arg(long, value_enum)]
    pub mechanism: ScramMechanismArg,
    /// Iterations of the password hash, 4096 to 16384 (Kafka's bounds).
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub iterations: u32,
    /// Read the password from this file (its first line; a trailing newline is not part of it).
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<std::path::PathBuf>,
    /// Read the password from standard input (its first line).
    #[arg(long)]
    pub password_stdin: bool,
    #[command(flatten)]
    pub common: UsersCommonArgs,
}

/// `kcli users remove`.
#[derive(Debug, clap::Args)]
pub struct UsersRemoveArgs {
    /// The user whose credentials are removed.
    #[arg(value_name = "USER")]
    pub user: String,
    /// Remove only this mechanism's credential (it must exist); without it, every SCRAM
    /// credential of the user (at least one must exist).
    #[arg(long, value_enum)]
    pub mechanism: Option<ScramMechanismArg>,
    #[command(flatten)]
    pub common: UsersCommonArgs,
}

/// SCRAM mechanisms, under their SASL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScramMechanismArg {
    /// SCRAM-SHA-256 (RFC 7677).
    #[value(name = "SCRAM-SHA-256")]
    ScramSha256,
    /// SCRAM-SHA-512.
    #[value(name = "SCRAM-SHA-512")]
    ScramSha512,
}

/// Output formats of `kcli users`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UsersFormat {
    /// A table (list) or one line saying what was done.
    Text,
    /// One JSON document.
    Json,
}

/// `kcli describe-cluster`: what ZooKeeper holds about the cluster, with filters.
#[derive(Debug, clap::Args)]
pub struct DescribeClusterArgs {
    #[command(flatten)]
    pub source: DescribeClusterSourceArgs,
    /// Show only this topic (repeatable); a topic that does not exist is an error.
    #[arg(long, value_name = "TOPIC")]
    pub topic: Vec<String>,
    /// Show only partitions whose ISR is smaller than their replication factor (with --offline:
    /// either).
    #[arg(long)]
    pub under_replicated: bool,
    /// Show only partitions without a leader, or whose leader is not a live broker (with
    /// --under-replicated: either).
    #[arg(long)]
    pub offline: bool,
    /// The min.insync.replicas of topics that have neither their own nor a cluster default
    /// (/config/brokers/<default>) in ZooKeeper, for the UNDER-MIN-ISR flag.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(i32).range(1..))]
    pub min_isr: i32,
    /// Output format: tables, or one JSON document (docs/describe-cluster.md).
    #[arg(long, value_enum, default_value_t = DescribeFormat::Text)]
    pub format: DescribeFormat,
    /// How long to wait for ZooKeeper to accept the session, and again for the reads (or for
    /// a broker to connect and answer each request), in ms.
    #[arg(long, value_name = "MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub connection_timeout_ms: u64,
}

/// Where `kcli describe-cluster` reads the cluster: exactly one of the three.
#[derive(Debug, clap::Args)]
#[group(id = "describe_cluster_source", required = true, multiple = false)]
pub struct DescribeClusterSourceArgs {
    /// The ZooKeeper ensemble, as Kafka's `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot].
    /// A chroot that does not exist is an error.
    #[arg(long, value_name = "HOST:PORT[/CHROOT]")]
    pub zookeeper: Option<String>,
    /// The data dir of a `kcli serve` without ZooKeeper (its first log dir, ./kcli-data by
    /// default): its embedded metadata store read from disk, without locking or writing,
    /// whether the broker runs or not. Brokers and the controller are not kept on disk.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<std::path::PathBuf>,
    /// Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked:
    /// Metadata and DescribeConfigs. Epochs and reassignments are not known this way.
    #[arg(long, value_name = "HOST:PORT[,...]")]
    pub bootstrap_server: Option<String>,
}

/// Output formats of `kcli describe-cluster`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DescribeFormat {
    /// Tables: brokers, topics, partitions with their flags.
    Text,
    /// One JSON object: cluster_id, controller, brokers, topics with partitions.
    Json,
}

/// `kcli dump-segment`: Kafka 3.9's DumpLogSegments options under the same names, plus an output
/// format and a summary. The file kind is taken from the suffix: `.log`, `.index`, `.timeindex`,
/// `.snapshot`, `.txnindex` (and KRaft `.checkpoint`); anything else is ignored with a message.
/// A directory stands for the files of those kinds in it.
#[derive(Debug, clap::Args)]
pub struct DumpSegmentArgs {
    /// The files to dump: segments, indexes, producer snapshots, transaction indexes. A
    /// partition directory stands for those files in it, a log dir for those of its partitions.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<std::path::PathBuf>,
    /// Also print one line per record under its batch line.
    #[arg(long)]
    pub deep_iteration: bool,
    /// Print record keys and payloads as UTF-8 text; implies --deep-iteration.
    #[arg(long)]
    pub print_data_log: bool,
    /// Omit per-record metadata (offset, timestamp, sizes), keeping keys and payloads.
    #[arg(long)]
    pub skip_record_metadata: bool,
    /// Decode keys and payloads as `__consumer_offsets` records (offset commits and group
    /// metadata, as JSON), as kafka-dump-log's --offsets-decoder; implies --print-data-log.
    #[arg(long)]
    pub offsets_decoder: bool,
    /// Decode keys and payloads as `__transaction_state` records, as kafka-dump-log's
    /// --transaction-log-decoder; implies --print-data-log (text format only).
    #[arg(long, conflicts_with = "offsets_decoder")]
    pub transaction_log_decoder: bool,
    /// Read at most this many bytes of each .log file (Kafka's default: 2147483647, no limit).
    #[arg(long, value_name = "SIZE", default_value_t = i32::MAX, value_parser = clap::value_parser!(i32).range(0..))]
    pub max_bytes: i32,
    /// The largest batch expected when verifying an offset index against its log (bytes).
    #[arg(long, value_name = "SIZE", default_value_t = 5 * 1024 * 1024, value_parser = clap::value_parser!(i32).range(0..))]
    pub max_message_size: i32,
    /// For .index and .timeindex files: check every entry against the log without printing the
    /// entries.
    #[arg(long)]
    pub verify_index_only: bool,
    /// For .index and .timeindex files: run only the sanity check the broker runs at startup to
    /// decide whether an index must be rebuilt.
    #[arg(long)]
    pub index_sanity_check: bool,
    /// Output format: Kafka's text, or JSON Lines (docs/dump-segment-json.md).
    #[arg(long, value_enum, default_value_t = DumpFormat::Text)]
    pub format: DumpFormat,
    /// Print one summary table per file (batches, records, bytes, offset and timestamp ranges,
    /// codecs, compression ratio, invalid batches) instead of the batch lines.
    #[arg(long)]
    pub summary: bool,
}

/// Output formats of `kcli dump-segment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DumpFormat {
    /// Kafka's `kafka-dump-log.sh` text, line for line.
    Text,
    /// JSON Lines: one object per batch or index entry.
    Json,
}

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to generate completions for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Shells with committed completion files under `completions/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
}

/// `kcli rebuild-index`: the indexes Kafka's `LogSegment.recover` writes, rebuilt offline or
/// checked against the `.log` files.
#[derive(Debug, clap::Args)]
pub struct RebuildIndexArgs {
    /// A segment (`.log` file), a partition directory or a log dir holding partition directories.
    #[arg(value_name = "PATH")]
    pub path: std::path::PathBuf,
    /// Check the existing indexes against the log without changing anything; exit 1 when an
    /// entry is wrong. Ends with a line counting the segments and indexes checked and the
    /// problems found.
    #[arg(long)]
    pub verify: bool,
    /// With --verify: also require the indexes to be byte for byte what a rebuild writes.
    #[arg(long, requires = "verify")]
    pub strict: bool,
    /// Report what a rebuild would change without writing anything.
    #[arg(long, conflicts_with = "verify")]
    pub dry_run: bool,
    /// Bytes of log between index entries: the topic's `index.interval.bytes`.
    #[arg(long, value_name = "BYTES", default_value_t = 4096)]
    pub index_interval_bytes: u32,
    /// Cut a segment's corrupt or torn tail at the end of its valid data, as a broker's
    /// recovery does; without it the tail is only reported.
    #[arg(long, conflicts_with_all = ["verify", "dry_run"])]
    pub truncate_corrupt: bool,
    /// Output format: text (problems, then a summary table) or JSON Lines (one object per
    /// segment; docs/rebuild-index.md).
    #[arg(long, value_enum, default_value_t = RebuildIndexFormat::Text)]
    pub format: RebuildIndexFormat,
}

/// Output formats of `kcli rebuild-index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RebuildIndexFormat {
    /// Problems found, one line each, then a summary table.
    Text,
    /// One JSON object per segment, one per line.
    Json,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}

/// `kcli acls`: ACL administration.
#[derive(Debug, Subcommand)]
pub enum AclsCommand {
    /// List the ACLs the filter selects (all of them without a resource or --principal).
    List(AclsListArgs),
    /// Add ACLs: each --allow-principal and --deny-principal with each --operation and
    /// --host, on each resource given.
    Add(AclsChangeArgs),
    /// Remove the ACLs of the resources given that match the principals, operations and hosts
    /// (an option left out matches any), printing what was removed.
    Remove(AclsChangeArgs),
}

/// Where `kcli acls` reads and writes ACLs: exactly one of the two.
#[derive(Debug, clap::Args)]
#[group(id = "acls_source", required = true, multiple = false)]
pub struct AclsSourceArgs {
    /// The ZooKeeper ensemble, as Kafka's `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot].
    /// Reads and writes the ACL znodes and change notifications as Kafka's AclAuthorizer does;
    /// works with every broker down.
    #[arg(long, value_name = "HOST:PORT[/CHROOT]")]
    pub zookeeper: Option<String>,
    /// Brokers of the cluster (HOST:PORT[,HOST:PORT...]); the first that answers is asked.
    #[arg(long, value_name = "HOST:PORT[,...]")]
    pub bootstrap_server: Option<String>,
}

/// The resources an ACL command names.
#[derive(Debug, clap::Args)]
pub struct AclsResourceArgs {
    /// A topic (repeatable); `*` is every topic.
    #[arg(long, value_name = "TOPIC")]
    pub topic: Vec<String>,
    /// A consumer group (repeatable); `*` is every group.
    #[arg(long, value_name = "GROUP")]
    pub group: Vec<String>,
    /// The cluster resource (`kafka-cluster`).
    #[arg(long)]
    pub cluster: bool,
    /// A transactional id (repeatable); `*` is every one.
    #[arg(long, value_name = "ID")]
    pub transactional_id: Vec<String>,
}

/// Options every `kcli acls` command takes.
#[derive(Debug, clap::Args)]
pub struct AclsCommonArgs {
    #[command(flatten)]
    pub source: AclsSourceArgs,
    /// Output format: a table, or one JSON document (docs/acls.md).
    #[arg(long, value_enum, default_value_t = UsersFormat::Text)]
    pub format: UsersFormat,
    /// How long to wait for ZooKeeper or a broker to connect and answer, in ms.
    #[arg(long, value_name = "MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub connection_timeout_ms: u64,
}

/// `kcli acls list`.
#[derive(Debug, clap::Args)]
pub struct AclsListArgs {
    #[command(flatten)]
    pub resources: AclsResourceArgs,
    /// How the resource names match stored patterns: `any` (default: every pattern of those
    /// names), `match` (the ACLs that apply to them: literal, `*` and prefixes), `literal`,
    /// `prefixed`.
    #[arg(long, value_enum, default_value_t = AclsPatternArg::Any)]
    pub resource_pattern_type: AclsPatternArg,
    /// Only the ACLs of this principal (`User:alice`).
    #[arg(long, value_name = "TYPE:NAME")]
    pub principal: Option<String>,
    #[command(flatten)]
    pub common: AclsCommonArgs,
}

/// `kcli acls add` and `kcli acls remove`.
#[derive(Debug, clap::Args)]
pub struct AclsChangeArgs {
    #[command(flatten)]
    pub resources: AclsResourceArgs,
    /// The pattern type of the resources: `literal` (default) or `prefixed`.
    #[arg(long, value_enum, default_value_t = AclsPatternArg::Literal)]
    pub resource_pattern_type: AclsPatternArg,
    /// A principal allowed (repeatable), `type:name` (`User:alice`, `User:*` for everyone).
    #[arg(long, value_name = "TYPE:NAME")]
    pub allow_principal: Vec<String>,
    /// A principal denied (repeatable); a deny beats every allow.
    #[arg(long, value_name = "TYPE:NAME")]
    pub deny_principal: Vec<String>,
    /// An operation (repeatable): All, Read, Write, Create, Delete, Alter, Describe,
    /// ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens,
    /// DescribeTokens (any case). Required for add.
    #[arg(long, value_name = "OPERATION")]
    pub operation: Vec<String>,
    /// A client host the ACLs apply from (repeatable, an IP address); `*` (the default for add)
    /// is every host.
    #[arg(long, value_name = "HOST")]
    pub host: Vec<String>,
    #[command(flatten)]
    pub common: AclsCommonArgs,
}

/// Resource pattern types on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AclsPatternArg {
    /// Every pattern type (filters only).
    Any,
    /// The patterns that apply to a name: literal, wildcard and prefixes (filters only).
    Match,
    /// The name exactly (or `*`, every name).
    Literal,
    /// Every name that starts with it.
    Prefixed,
}
