
use builtin;
use str;

set edit:completion:arg-completer[kcli] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'kcli'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'kcli'= {
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand acls 'List, add and remove ACLs, stored as Kafka''s AclAuthorizer stores them in ZooKeeper (/kafka-acl, /kafka-acl-extended), through ZooKeeper (--zookeeper, as `kafka-acls --authorizer-properties zookeeper.connect=...`) or through a broker (--bootstrap-server, the DescribeAcls, CreateAcls and DeleteAcls APIs)'
            cand assign 'Compute partition assignments with Kafka''s algorithm, rack-aware with --racks, offline or for the live cluster, and start, verify or cancel reassignments (docs/assign.md)'
            cand completions 'Print shell completions for kcli to stdout'
            cand describe-cluster 'Show the cluster as ZooKeeper records it: brokers, the controller, topics and every partition''s leader, ISR and health flags (OFFLINE, UNDER-REPLICATED, UNDER-MIN-ISR, PREFERRED-NOT-LEADER, RECOVERING, REASSIGNING, MARKED-FOR-DELETION)'
            cand dump-segment 'Dump Kafka log segments, indexes, producer snapshots and transaction indexes, as Kafka''s `kafka-dump-log.sh` (DumpLogSegments) prints them, or as JSON Lines or a summary table'
            cand rebuild-index 'Rebuild or verify the .index and .timeindex files of log segments'
            cand users 'List, add and remove users'' SCRAM credentials, stored as Kafka stores them in ZooKeeper''s /config/users, through ZooKeeper (--zookeeper, as `kafka-configs --zookeeper`) or through a broker (--bootstrap-server, the SCRAM credential APIs)'
            cand serve 'Run a Kafka broker: a single node on 127.0.0.1:9092 with data in ./kcli-data, its cluster metadata kept in an embedded store in the first log dir. Stop it with Ctrl-C or SIGTERM for a clean shutdown'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kcli;acls'= {
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand list 'List the ACLs the filter selects (all of them without a resource or --principal)'
            cand add 'Add ACLs: each --allow-principal and --deny-principal with each --operation and --host, on each resource given'
            cand remove 'Remove the ACLs of the resources given that match the principals, operations and hosts (an option left out matches any), printing what was removed'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kcli;acls;list'= {
            cand --topic 'A topic (repeatable); `*` is every topic'
            cand --group 'A consumer group (repeatable); `*` is every group'
            cand --transactional-id 'A transactional id (repeatable); `*` is every one'
            cand --resource-pattern-type 'How the resource names match stored patterns: `any` (default: every pattern of those names), `match` (the ACLs that apply to them: literal, `*` and prefixes), `literal`, `prefixed`'
            cand --principal 'Only the ACLs of this principal (`User:alice`)'
            cand --zookeeper 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Reads and writes the ACL znodes and change notifications as Kafka''s AclAuthorizer does; works with every broker down'
            cand --bootstrap-server 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]); the first that answers is asked'
            cand --format 'Output format: a table, or one JSON document (docs/acls.md)'
            cand --connection-timeout-ms 'How long to wait for ZooKeeper or a broker to connect and answer, in ms'
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand --cluster 'The cluster resource (`kafka-cluster`)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;acls;add'= {
            cand --topic 'A topic (repeatable); `*` is every topic'
            cand --group 'A consumer group (repeatable); `*` is every group'
            cand --transactional-id 'A transactional id (repeatable); `*` is every one'
            cand --resource-pattern-type 'The pattern type of the resources: `literal` (default) or `prefixed`'
            cand --allow-principal 'A principal allowed (repeatable), `type:name` (`User:alice`, `User:*` for everyone)'
            cand --deny-principal 'A principal denied (repeatable); a deny beats every allow'
            cand --operation 'An operation (repeatable): All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens (any case). Required for add'
            cand --host 'A client host the ACLs apply from (repeatable, an IP address); `*` (the default for add) is every host'
            cand --zookeeper 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Reads and writes the ACL znodes and change notifications as Kafka''s AclAuthorizer does; works with every broker down'
            cand --bootstrap-server 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]); the first that answers is asked'
            cand --format 'Output format: a table, or one JSON document (docs/acls.md)'
            cand --connection-timeout-ms 'How long to wait for ZooKeeper or a broker to connect and answer, in ms'
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand --cluster 'The cluster resource (`kafka-cluster`)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;acls;remove'= {
            cand --topic 'A topic (repeatable); `*` is every topic'
            cand --group 'A consumer group (repeatable); `*` is every group'
            cand --transactional-id 'A transactional id (repeatable); `*` is every one'
            cand --resource-pattern-type 'The pattern type of the resources: `literal` (default) or `prefixed`'
            cand --allow-principal 'A principal allowed (repeatable), `type:name` (`User:alice`, `User:*` for everyone)'
            cand --deny-principal 'A principal denied (repeatable); a deny beats every allow'
            cand --operation 'An operation (repeatable): All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens (any case). Required for add'
            cand --host 'A client host the ACLs apply from (repeatable, an IP address); `*` (the default for add) is every host'
            cand --zookeeper 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Reads and writes the ACL znodes and change notifications as Kafka''s AclAuthorizer does; works with every broker down'
            cand --bootstrap-server 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]); the first that answers is asked'
            cand --format 'Output format: a table, or one JSON document (docs/acls.md)'
            cand --connection-timeout-ms 'How long to wait for ZooKeeper or a broker to connect and answer, in ms'
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand --cluster 'The cluster resource (`kafka-cluster`)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;acls;help'= {
            cand list 'List the ACLs the filter selects (all of them without a resource or --principal)'
            cand add 'Add ACLs: each --allow-principal and --deny-principal with each --operation and --host, on each resource given'
            cand remove 'Remove the ACLs of the resources given that match the principals, operations and hosts (an option left out matches any), printing what was removed'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kcli;acls;help;list'= {
        }
        &'kcli;acls;help;add'= {
        }
        &'kcli;acls;help;remove'= {
        }
        &'kcli;acls;help;help'= {
        }
        &'kcli;assign'= {
            cand --brokers 'The brokers to assign to, without a cluster: comma-separated ids. May be omitted with --racks, which then names them'
            cand --racks 'Each broker''s rack, without a cluster: comma-separated BROKER:RACK pairs, e.g. `0:r1,1:r3,2:r3`. Brokers of --brokers not named here have no rack'
            cand --partitions 'Partitions of the new topic to assign'
            cand --replication-factor 'Replicas per partition of the new topic'
            cand --rack-aware-mode 'How racks are used, with Kafka''s meaning: enforced (every broker has a rack or none has; only some is an error), safe (racks only when every broker has one), disabled'
            cand --start-index 'Fix the start index (the first partition''s leader in the broker list) and, as Kafka''s fixed start index does, the replica shift too'
            cand --replica-shift 'Fix the replica shift alone (the distance of the second replica from the first)'
            cand --seed 'Seed the random draws of start index and shift (java.util.Random''s generator), so they can be repeated; without it a seed is drawn and printed'
            cand --topic 'The new topic''s name in the output'
            cand --format 'Output format: tables and Kafka''s JSON, or the proposal''s reassignment JSON alone'
            cand --zookeeper 'Take brokers, racks and topics from this ZooKeeper ensemble (Kafka''s zookeeper.connect: HOST:PORT[,HOST:PORT...][/chroot]); with an action, start or verify through it (/admin/reassign_partitions)'
            cand --bootstrap-server 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: brokers, racks and topics from Metadata (unless --zookeeper is given), partition sizes for the bytes moved, and the controller for --execute, --verify and --cancel'
            cand --topics-to-move-json 'Propose new assignments for these existing topics: Kafka''s `{"topics":[{"topic":"foo"}],"version":1}`'
            cand --broker-list 'Assign only to these of the cluster''s brokers (comma-separated ids)'
            cand --reassignment-json 'The reassignment, in Kafka''s reassignment JSON (what --format json prints)'
            cand --throttle 'With --execute: throttle the moves'' replication to this many bytes per second (sets `leader.replication.throttled.rate` and `follower.replication.throttled.rate` on every broker a move touches, and the topics'' throttled replicas, as Kafka''s tool does); --verify removes them once no move is in progress'
            cand --connection-timeout-ms 'How long to wait for ZooKeeper or a broker to connect and answer, in ms'
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand --minimize-movement 'With --topics-to-move-json: meet the rack and balance constraints of Kafka''s proposal (same draws) while moving as few replicas as possible, and nothing when the current assignment already meets them'
            cand --execute 'Start the reassignment in --reassignment-json, after printing the current assignment for a rollback'
            cand --verify 'Report each partition of --reassignment-json as completed or still in progress; exit 1 unless all are completed'
            cand --preserve-throttles 'With --verify: leave the replication throttles in place even when no move is in progress (Kafka''s --preserve-throttles)'
            cand --cancel 'Cancel the reassignments in progress of the partitions in --reassignment-json (needs --bootstrap-server: ZooKeeper''s znode cannot cancel)'
            cand --additional 'With --execute: start even though other reassignments are in progress'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;completions'= {
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;describe-cluster'= {
            cand --zookeeper 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. A chroot that does not exist is an error'
            cand --data-dir 'The data dir of a `kcli serve` without ZooKeeper (its first log dir, ./kcli-data by default): its embedded metadata store read from disk, without locking or writing, whether the broker runs or not. Brokers and the controller are not kept on disk'
            cand --bootstrap-server 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: Metadata and DescribeConfigs. Epochs and reassignments are not known this way'
            cand --topic 'Show only this topic (repeatable); a topic that does not exist is an error'
            cand --min-isr 'The min.insync.replicas of topics that have neither their own nor a cluster default (/config/brokers/<default>) in ZooKeeper, for the UNDER-MIN-ISR flag'
            cand --format 'Output format: tables, or one JSON document (docs/describe-cluster.md)'
            cand --connection-timeout-ms 'How long to wait for ZooKeeper to accept the session, and again for the reads (or for a broker to connect and answer each request), in ms'
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand --under-replicated 'Show only partitions whose ISR is smaller than their replication factor (with --offline: either)'
            cand --offline 'Show only partitions without a leader, or whose leader is not a live broker (with --under-replicated: either)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;dump-segment'= {
            cand --max-bytes 'Read at most this many bytes of each .log file (Kafka''s default: 2147483647, no limit)'
            cand --max-message-size 'The largest batch expected when verifying an offset index against its log (bytes)'
            cand --format 'Output format: Kafka''s text, or JSON Lines (docs/dump-segment-json.md)'
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand --deep-iteration 'Also print one line per record under its batch line'
            cand --print-data-log 'Print record keys and payloads as UTF-8 text; implies --deep-iteration'
            cand --skip-record-metadata 'Omit per-record metadata (offset, timestamp, sizes), keeping keys and payloads'
            cand --offsets-decoder 'Decode keys and payloads as `__consumer_offsets` records (offset commits and group metadata, as JSON), as kafka-dump-log''s --offsets-decoder; implies --print-data-log'
            cand --transaction-log-decoder 'Decode keys and payloads as `__transaction_state` records, as kafka-dump-log''s --transaction-log-decoder; implies --print-data-log (text format only)'
            cand --verify-index-only 'For .index and .timeindex files: check every entry against the log without printing the entries'
            cand --index-sanity-check 'For .index and .timeindex files: run only the sanity check the broker runs at startup to decide whether an index must be rebuilt'
            cand --summary 'Print one summary table per file (batches, records, bytes, offset and timestamp ranges, codecs, compression ratio, invalid batches) instead of the batch lines'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;rebuild-index'= {
            cand --index-interval-bytes 'Bytes of log between index entries: the topic''s `index.interval.bytes`'
            cand --format 'Output format: text (problems, then a summary table) or JSON Lines (one object per segment; docs/rebuild-index.md)'
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand --verify 'Check the existing indexes against the log without changing anything; exit 1 when an entry is wrong. Ends with a line counting the segments and indexes checked and the problems found'
            cand --strict 'With --verify: also require the indexes to be byte for byte what a rebuild writes'
            cand --dry-run 'Report what a rebuild would change without writing anything'
            cand --truncate-corrupt 'Cut a segment''s corrupt or torn tail at the end of its valid data, as a broker''s recovery does; without it the tail is only reported'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;users'= {
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand list 'List the users with SCRAM credentials (or the named ones): mechanism and iterations, and their quotas'
            cand add 'Set a user''s credential for one mechanism from a password, replacing any the user had for that mechanism and keeping the user''s other config (other mechanisms, quotas)'
            cand remove 'Remove a user''s credential for one mechanism, or (without --mechanism) all of them'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kcli;users;list'= {
            cand --zookeeper 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Writes `/config/users/<user>` and a `/config/changes` notification, as Kafka''s `kafka-configs --zookeeper` does; works with every broker down'
            cand --bootstrap-server 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: DescribeUserScramCredentials there, AlterUserScramCredentials at the controller'
            cand --format 'Output format: a table or one line of text, or one JSON document (docs/users.md)'
            cand --connection-timeout-ms 'How long to wait for ZooKeeper or a broker to connect and answer, in ms'
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;users;add'= {
            cand --mechanism 'The SCRAM mechanism of the credential'
            cand --iterations 'Iterations of the password hash, 4096 to 16384 (Kafka''s bounds)'
            cand --password-file 'Read the password from this file (its first line; a trailing newline is not part of it)'
            cand --zookeeper 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Writes `/config/users/<user>` and a `/config/changes` notification, as Kafka''s `kafka-configs --zookeeper` does; works with every broker down'
            cand --bootstrap-server 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: DescribeUserScramCredentials there, AlterUserScramCredentials at the controller'
            cand --format 'Output format: a table or one line of text, or one JSON document (docs/users.md)'
            cand --connection-timeout-ms 'How long to wait for ZooKeeper or a broker to connect and answer, in ms'
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand --password-stdin 'Read the password from standard input (its first line)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;users;remove'= {
            cand --mechanism 'Remove only this mechanism''s credential (it must exist); without it, every SCRAM credential of the user (at least one must exist)'
            cand --zookeeper 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Writes `/config/users/<user>` and a `/config/changes` notification, as Kafka''s `kafka-configs --zookeeper` does; works with every broker down'
            cand --bootstrap-server 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: DescribeUserScramCredentials there, AlterUserScramCredentials at the controller'
            cand --format 'Output format: a table or one line of text, or one JSON document (docs/users.md)'
            cand --connection-timeout-ms 'How long to wait for ZooKeeper or a broker to connect and answer, in ms'
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;users;help'= {
            cand list 'List the users with SCRAM credentials (or the named ones): mechanism and iterations, and their quotas'
            cand add 'Set a user''s credential for one mechanism from a password, replacing any the user had for that mechanism and keeping the user''s other config (other mechanisms, quotas)'
            cand remove 'Remove a user''s credential for one mechanism, or (without --mechanism) all of them'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kcli;users;help;list'= {
        }
        &'kcli;users;help;add'= {
        }
        &'kcli;users;help;remove'= {
        }
        &'kcli;users;help;help'= {
        }
        &'kcli;serve'= {
            cand --config 'A `server.properties` file in Kafka''s format'
            cand --override 'Set one broker config, overriding the file (repeatable), e.g. `--override listeners=PLAINTEXT://127.0.0.1:9093`'
            cand --zookeeper 'Join the cluster coordinated by this ZooKeeper ensemble: shorthand for `--override zookeeper.connect=HOST:PORT[,HOST:PORT...][/chroot]` (the chroot is created when missing). Without it, and without `zookeeper.connect`, the broker keeps its metadata in an embedded store and runs as a single-node cluster'
            cand --log-format 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'kcli;help'= {
            cand acls 'List, add and remove ACLs, stored as Kafka''s AclAuthorizer stores them in ZooKeeper (/kafka-acl, /kafka-acl-extended), through ZooKeeper (--zookeeper, as `kafka-acls --authorizer-properties zookeeper.connect=...`) or through a broker (--bootstrap-server, the DescribeAcls, CreateAcls and DeleteAcls APIs)'
            cand assign 'Compute partition assignments with Kafka''s algorithm, rack-aware with --racks, offline or for the live cluster, and start, verify or cancel reassignments (docs/assign.md)'
            cand completions 'Print shell completions for kcli to stdout'
            cand describe-cluster 'Show the cluster as ZooKeeper records it: brokers, the controller, topics and every partition''s leader, ISR and health flags (OFFLINE, UNDER-REPLICATED, UNDER-MIN-ISR, PREFERRED-NOT-LEADER, RECOVERING, REASSIGNING, MARKED-FOR-DELETION)'
            cand dump-segment 'Dump Kafka log segments, indexes, producer snapshots and transaction indexes, as Kafka''s `kafka-dump-log.sh` (DumpLogSegments) prints them, or as JSON Lines or a summary table'
            cand rebuild-index 'Rebuild or verify the .index and .timeindex files of log segments'
            cand users 'List, add and remove users'' SCRAM credentials, stored as Kafka stores them in ZooKeeper''s /config/users, through ZooKeeper (--zookeeper, as `kafka-configs --zookeeper`) or through a broker (--bootstrap-server, the SCRAM credential APIs)'
            cand serve 'Run a Kafka broker: a single node on 127.0.0.1:9092 with data in ./kcli-data, its cluster metadata kept in an embedded store in the first log dir. Stop it with Ctrl-C or SIGTERM for a clean shutdown'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'kcli;help;acls'= {
            cand list 'List the ACLs the filter selects (all of them without a resource or --principal)'
            cand add 'Add ACLs: each --allow-principal and --deny-principal with each --operation and --host, on each resource given'
            cand remove 'Remove the ACLs of the resources given that match the principals, operations and hosts (an option left out matches any), printing what was removed'
        }
        &'kcli;help;acls;list'= {
        }
        &'kcli;help;acls;add'= {
        }
        &'kcli;help;acls;remove'= {
        }
        &'kcli;help;assign'= {
        }
        &'kcli;help;completions'= {
        }
        &'kcli;help;describe-cluster'= {
        }
        &'kcli;help;dump-segment'= {
        }
        &'kcli;help;rebuild-index'= {
        }
        &'kcli;help;users'= {
            cand list 'List the users with SCRAM credentials (or the named ones): mechanism and iterations, and their quotas'
            cand add 'Set a user''s credential for one mechanism from a password, replacing any the user had for that mechanism and keeping the user''s other config (other mechanisms, quotas)'
            cand remove 'Remove a user''s credential for one mechanism, or (without --mechanism) all of them'
        }
        &'kcli;help;users;list'= {
        }
        &'kcli;help;users;add'= {
        }
        &'kcli;help;users;remove'= {
        }
        &'kcli;help;serve'= {
        }
        &'kcli;help;help'= {
        }
    ]
    $completions[$command]
}
