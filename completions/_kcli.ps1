
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kcli' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kcli'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kcli' {
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('acls', 'acls', [CompletionResultType]::ParameterValue, 'List, add and remove ACLs, stored as Kafka''s AclAuthorizer stores them in ZooKeeper (/kafka-acl, /kafka-acl-extended), through ZooKeeper (--zookeeper, as `kafka-acls --authorizer-properties zookeeper.connect=...`) or through a broker (--bootstrap-server, the DescribeAcls, CreateAcls and DeleteAcls APIs)')
            [CompletionResult]::new('assign', 'assign', [CompletionResultType]::ParameterValue, 'Compute partition assignments with Kafka''s algorithm, rack-aware with --racks, offline or for the live cluster, and start, verify or cancel reassignments (docs/assign.md)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions for kcli to stdout')
            [CompletionResult]::new('describe-cluster', 'describe-cluster', [CompletionResultType]::ParameterValue, 'Show the cluster as ZooKeeper records it: brokers, the controller, topics and every partition''s leader, ISR and health flags (OFFLINE, UNDER-REPLICATED, UNDER-MIN-ISR, PREFERRED-NOT-LEADER, RECOVERING, REASSIGNING, MARKED-FOR-DELETION)')
            [CompletionResult]::new('dump-segment', 'dump-segment', [CompletionResultType]::ParameterValue, 'Dump Kafka log segments, indexes, producer snapshots and transaction indexes, as Kafka''s `kafka-dump-log.sh` (DumpLogSegments) prints them, or as JSON Lines or a summary table')
            [CompletionResult]::new('rebuild-index', 'rebuild-index', [CompletionResultType]::ParameterValue, 'Rebuild or verify the .index and .timeindex files of log segments')
            [CompletionResult]::new('users', 'users', [CompletionResultType]::ParameterValue, 'List, add and remove users'' SCRAM credentials, stored as Kafka stores them in ZooKeeper''s /config/users, through ZooKeeper (--zookeeper, as `kafka-configs --zookeeper`) or through a broker (--bootstrap-server, the SCRAM credential APIs)')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Run a Kafka broker: a single node on 127.0.0.1:9092 with data in ./kcli-data, its cluster metadata kept in an embedded store in the first log dir. Stop it with Ctrl-C or SIGTERM for a clean shutdown')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kcli;acls' {
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the ACLs the filter selects (all of them without a resource or --principal)')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add ACLs: each --allow-principal and --deny-principal with each --operation and --host, on each resource given')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove the ACLs of the resources given that match the principals, operations and hosts (an option left out matches any), printing what was removed')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kcli;acls;list' {
            [CompletionResult]::new('--topic', '--topic', [CompletionResultType]::ParameterName, 'A topic (repeatable); `*` is every topic')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'A consumer group (repeatable); `*` is every group')
            [CompletionResult]::new('--transactional-id', '--transactional-id', [CompletionResultType]::ParameterName, 'A transactional id (repeatable); `*` is every one')
            [CompletionResult]::new('--resource-pattern-type', '--resource-pattern-type', [CompletionResultType]::ParameterName, 'How the resource names match stored patterns: `any` (default: every pattern of those names), `match` (the ACLs that apply to them: literal, `*` and prefixes), `literal`, `prefixed`')
            [CompletionResult]::new('--principal', '--principal', [CompletionResultType]::ParameterName, 'Only the ACLs of this principal (`User:alice`)')
            [CompletionResult]::new('--zookeeper', '--zookeeper', [CompletionResultType]::ParameterName, 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Reads and writes the ACL znodes and change notifications as Kafka''s AclAuthorizer does; works with every broker down')
            [CompletionResult]::new('--bootstrap-server', '--bootstrap-server', [CompletionResultType]::ParameterName, 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]); the first that answers is asked')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: a table, or one JSON document (docs/acls.md)')
            [CompletionResult]::new('--connection-timeout-ms', '--connection-timeout-ms', [CompletionResultType]::ParameterName, 'How long to wait for ZooKeeper or a broker to connect and answer, in ms')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The cluster resource (`kafka-cluster`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kcli;acls;add' {
            [CompletionResult]::new('--topic', '--topic', [CompletionResultType]::ParameterName, 'A topic (repeatable); `*` is every topic')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'A consumer group (repeatable); `*` is every group')
            [CompletionResult]::new('--transactional-id', '--transactional-id', [CompletionResultType]::ParameterName, 'A transactional id (repeatable); `*` is every one')
            [CompletionResult]::new('--resource-pattern-type', '--resource-pattern-type', [CompletionResultType]::ParameterName, 'The pattern type of the resources: `literal` (default) or `prefixed`')
            [CompletionResult]::new('--allow-principal', '--allow-principal', [CompletionResultType]::ParameterName, 'A principal allowed (repeatable), `type:name` (`User:alice`, `User:*` for everyone)')
            [CompletionResult]::new('--deny-principal', '--deny-principal', [CompletionResultType]::ParameterName, 'A principal denied (repeatable); a deny beats every allow')
            [CompletionResult]::new('--operation', '--operation', [CompletionResultType]::ParameterName, 'An operation (repeatable): All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens (any case). Required for add')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'A client host the ACLs apply from (repeatable, an IP address); `*` (the default for add) is every host')
            [CompletionResult]::new('--zookeeper', '--zookeeper', [CompletionResultType]::ParameterName, 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Reads and writes the ACL znodes and change notifications as Kafka''s AclAuthorizer does; works with every broker down')
            [CompletionResult]::new('--bootstrap-server', '--bootstrap-server', [CompletionResultType]::ParameterName, 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]); the first that answers is asked')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: a table, or one JSON document (docs/acls.md)')
            [CompletionResult]::new('--connection-timeout-ms', '--connection-timeout-ms', [CompletionResultType]::ParameterName, 'How long to wait for ZooKeeper or a broker to connect and answer, in ms')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The cluster resource (`kafka-cluster`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kcli;acls;remove' {
            [CompletionResult]::new('--topic', '--topic', [CompletionResultType]::ParameterName, 'A topic (repeatable); `*` is every topic')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'A consumer group (repeatable); `*` is every group')
            [CompletionResult]::new('--transactional-id', '--transactional-id', [CompletionResultType]::ParameterName, 'A transactional id (repeatable); `*` is every one')
            [CompletionResult]::new('--resource-pattern-type', '--resource-pattern-type', [CompletionResultType]::ParameterName, 'The pattern type of the resources: `literal` (default) or `prefixed`')
            [CompletionResult]::new('--allow-principal', '--allow-principal', [CompletionResultType]::ParameterName, 'A principal allowed (repeatable), `type:name` (`User:alice`, `User:*` for everyone)')
            [CompletionResult]::new('--deny-principal', '--deny-principal', [CompletionResultType]::ParameterName, 'A principal denied (repeatable); a deny beats every allow')
            [CompletionResult]::new('--operation', '--operation', [CompletionResultType]::ParameterName, 'An operation (repeatable): All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens (any case). Required for add')
            [CompletionResult]::new('--host', '--host', [CompletionResultType]::ParameterName, 'A client host the ACLs apply from (repeatable, an IP address); `*` (the default for add) is every host')
            [CompletionResult]::new('--zookeeper', '--zookeeper', [CompletionResultType]::ParameterName, 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Reads and writes the ACL znodes and change notifications as Kafka''s AclAuthorizer does; works with every broker down')
            [CompletionResult]::new('--bootstrap-server', '--bootstrap-server', [CompletionResultType]::ParameterName, 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]); the first that answers is asked')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: a table, or one JSON document (docs/acls.md)')
            [CompletionResult]::new('--connection-timeout-ms', '--connection-timeout-ms', [CompletionResultType]::ParameterName, 'How long to wait for ZooKeeper or a broker to connect and answer, in ms')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('--cluster', '--cluster', [CompletionResultType]::ParameterName, 'The cluster resource (`kafka-cluster`)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kcli;acls;help' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the ACLs the filter selects (all of them without a resource or --principal)')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add ACLs: each --allow-principal and --deny-principal with each --operation and --host, on each resource given')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove the ACLs of the resources given that match the principals, operations and hosts (an option left out matches any), printing what was removed')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kcli;acls;help;list' {
            break
        }
        'kcli;acls;help;add' {
            break
        }
        'kcli;acls;help;remove' {
            break
        }
        'kcli;acls;help;help' {
            break
        }
        'kcli;assign' {
            [CompletionResult]::new('--brokers', '--brokers', [CompletionResultType]::ParameterName, 'The brokers to assign to, without a cluster: comma-separated ids. May be omitted with --racks, which then names them')
            [CompletionResult]::new('--racks', '--racks', [CompletionResultType]::ParameterName, 'Each broker''s rack, without a cluster: comma-separated BROKER:RACK pairs, e.g. `0:r1,1:r3,2:r3`. Brokers of --brokers not named here have no rack')
            [CompletionResult]::new('--partitions', '--partitions', [CompletionResultType]::ParameterName, 'Partitions of the new topic to assign')
            [CompletionResult]::new('--replication-factor', '--replication-factor', [CompletionResultType]::ParameterName, 'Replicas per partition of the new topic')
            [CompletionResult]::new('--rack-aware-mode', '--rack-aware-mode', [CompletionResultType]::ParameterName, 'How racks are used, with Kafka''s meaning: enforced (every broker has a rack or none has; only some is an error), safe (racks only when every broker has one), disabled')
            [CompletionResult]::new('--start-index', '--start-index', [CompletionResultType]::ParameterName, 'Fix the start index (the first partition''s leader in the broker list) and, as Kafka''s fixed start index does, the replica shift too')
            [CompletionResult]::new('--replica-shift', '--replica-shift', [CompletionResultType]::ParameterName, 'Fix the replica shift alone (the distance of the second replica from the first)')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed the random draws of start index and shift (java.util.Random''s generator), so they can be repeated; without it a seed is drawn and printed')
            [CompletionResult]::new('--topic', '--topic', [CompletionResultType]::ParameterName, 'The new topic''s name in the output')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables and Kafka''s JSON, or the proposal''s reassignment JSON alone')
            [CompletionResult]::new('--zookeeper', '--zookeeper', [CompletionResultType]::ParameterName, 'Take brokers, racks and topics from this ZooKeeper ensemble (Kafka''s zookeeper.connect: HOST:PORT[,HOST:PORT...][/chroot]); with an action, start or verify through it (/admin/reassign_partitions)')
            [CompletionResult]::new('--bootstrap-server', '--bootstrap-server', [CompletionResultType]::ParameterName, 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: brokers, racks and topics from Metadata (unless --zookeeper is given), partition sizes for the bytes moved, and the controller for --execute, --verify and --cancel')
            [CompletionResult]::new('--topics-to-move-json', '--topics-to-move-json', [CompletionResultType]::ParameterName, 'Propose new assignments for these existing topics: Kafka''s `{"topics":[{"topic":"foo"}],"version":1}`')
            [CompletionResult]::new('--broker-list', '--broker-list', [CompletionResultType]::ParameterName, 'Assign only to these of the cluster''s brokers (comma-separated ids)')
            [CompletionResult]::new('--reassignment-json', '--reassignment-json', [CompletionResultType]::ParameterName, 'The reassignment, in Kafka''s reassignment JSON (what --format json prints)')
            [CompletionResult]::new('--throttle', '--throttle', [CompletionResultType]::ParameterName, 'With --execute: throttle the moves'' replication to this many bytes per second (sets `leader.replication.throttled.rate` and `follower.replication.throttled.rate` on every broker a move touches, and the topics'' throttled replicas, as Kafka''s tool does); --verify removes them once no move is in progress')
            [CompletionResult]::new('--connection-timeout-ms', '--connection-timeout-ms', [CompletionResultType]::ParameterName, 'How long to wait for ZooKeeper or a broker to connect and answer, in ms')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('--minimize-movement', '--minimize-movement', [CompletionResultType]::ParameterName, 'With --topics-to-move-json: meet the rack and balance constraints of Kafka''s proposal (same draws) while moving as few replicas as possible, and nothing when the current assignment already meets them')
            [CompletionResult]::new('--execute', '--execute', [CompletionResultType]::ParameterName, 'Start the reassignment in --reassignment-json, after printing the current assignment for a rollback')
            [CompletionResult]::new('--verify', '--verify', [CompletionResultType]::ParameterName, 'Report each partition of --reassignment-json as completed or still in progress; exit 1 unless all are completed')
            [CompletionResult]::new('--preserve-throttles', '--preserve-throttles', [CompletionResultType]::ParameterName, 'With --verify: leave the replication throttles in place even when no move is in progress (Kafka''s --preserve-throttles)')
            [CompletionResult]::new('--cancel', '--cancel', [CompletionResultType]::ParameterName, 'Cancel the reassignments in progress of the partitions in --reassignment-json (needs --bootstrap-server: ZooKeeper''s znode cannot cancel)')
            [CompletionResult]::new('--additional', '--additional', [CompletionResultType]::ParameterName, 'With --execute: start even though other reassignments are in progress')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kcli;completions' {
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kcli;describe-cluster' {
            [CompletionResult]::new('--zookeeper', '--zookeeper', [CompletionResultType]::ParameterName, 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. A chroot that does not exist is an error')
            [CompletionResult]::new('--data-dir', '--data-dir', [CompletionResultType]::ParameterName, 'The data dir of a `kcli serve` without ZooKeeper (its first log dir, ./kcli-data by default): its embedded metadata store read from disk, without locking or writing, whether the broker runs or not. Brokers and the controller are not kept on disk')
            [CompletionResult]::new('--bootstrap-server', '--bootstrap-server', [CompletionResultType]::ParameterName, 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: Metadata and DescribeConfigs. Epochs and reassignments are not known this way')
            [CompletionResult]::new('--topic', '--topic', [CompletionResultType]::ParameterName, 'Show only this topic (repeatable); a topic that does not exist is an error')
            [CompletionResult]::new('--min-isr', '--min-isr', [CompletionResultType]::ParameterName, 'The min.insync.replicas of topics that have neither their own nor a cluster default (/config/brokers/<default>) in ZooKeeper, for the UNDER-MIN-ISR flag')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: tables, or one JSON document (docs/describe-cluster.md)')
            [CompletionResult]::new('--connection-timeout-ms', '--connection-timeout-ms', [CompletionResultType]::ParameterName, 'How long to wait for ZooKeeper to accept the session, and again for the reads (or for a broker to connect and answer each request), in ms')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('--under-replicated', '--under-replicated', [CompletionResultType]::ParameterName, 'Show only partitions whose ISR is smaller than their replication factor (with --offline: either)')
            [CompletionResult]::new('--offline', '--offline', [CompletionResultType]::ParameterName, 'Show only partitions without a leader, or whose leader is not a live broker (with --under-replicated: either)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kcli;dump-segment' {
            [CompletionResult]::new('--max-bytes', '--max-bytes', [CompletionResultType]::ParameterName, 'Read at most this many bytes of each .log file (Kafka''s default: 2147483647, no limit)')
            [CompletionResult]::new('--max-message-size', '--max-message-size', [CompletionResultType]::ParameterName, 'The largest batch expected when verifying an offset index against its log (bytes)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: Kafka''s text, or JSON Lines (docs/dump-segment-json.md)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('--deep-iteration', '--deep-iteration', [CompletionResultType]::ParameterName, 'Also print one line per record under its batch line')
            [CompletionResult]::new('--print-data-log', '--print-data-log', [CompletionResultType]::ParameterName, 'Print record keys and payloads as UTF-8 text; implies --deep-iteration')
            [CompletionResult]::new('--skip-record-metadata', '--skip-record-metadata', [CompletionResultType]::ParameterName, 'Omit per-record metadata (offset, timestamp, sizes), keeping keys and payloads')
            [CompletionResult]::new('--offsets-decoder', '--offsets-decoder', [CompletionResultType]::ParameterName, 'Decode keys and payloads as `__consumer_offsets` records (offset commits and group metadata, as JSON), as kafka-dump-log''s --offsets-decoder; implies --print-data-log')
            [CompletionResult]::new('--transaction-log-decoder', '--transaction-log-decoder', [CompletionResultType]::ParameterName, 'Decode keys and payloads as `__transaction_state` records, as kafka-dump-log''s --transaction-log-decoder; implies --print-data-log (text format only)')
            [CompletionResult]::new('--verify-index-only', '--verify-index-only', [CompletionResultType]::ParameterName, 'For .index and .timeindex files: check every entry against the log without printing the entries')
            [CompletionResult]::new('--index-sanity-check', '--index-sanity-check', [CompletionResultType]::ParameterName, 'For .index and .timeindex files: run only the sanity check the broker runs at startup to decide whether an index must be rebuilt')
            [CompletionResult]::new('--summary', '--summary', [CompletionResultType]::ParameterName, 'Print one summary table per file (batches, records, bytes, offset and timestamp ranges, codecs, compression ratio, invalid batches) instead of the batch lines')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kcli;rebuild-index' {
            [CompletionResult]::new('--index-interval-bytes', '--index-interval-bytes', [CompletionResultType]::ParameterName, 'Bytes of log between index entries: the topic''s `index.interval.bytes`')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: text (problems, then a summary table) or JSON Lines (one object per segment; docs/rebuild-index.md)')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('--verify', '--verify', [CompletionResultType]::ParameterName, 'Check the existing indexes against the log without changing anything; exit 1 when an entry is wrong. Ends with a line counting the segments and indexes checked and the problems found')
            [CompletionResult]::new('--strict', '--strict', [CompletionResultType]::ParameterName, 'With --verify: also require the indexes to be byte for byte what a rebuild writes')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Report what a rebuild would change without writing anything')
            [CompletionResult]::new('--truncate-corrupt', '--truncate-corrupt', [CompletionResultType]::ParameterName, 'Cut a segment''s corrupt or torn tail at the end of its valid data, as a broker''s recovery does; without it the tail is only reported')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kcli;users' {
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the users with SCRAM credentials (or the named ones): mechanism and iterations, and their quotas')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Set a user''s credential for one mechanism from a password, replacing any the user had for that mechanism and keeping the user''s other config (other mechanisms, quotas)')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove a user''s credential for one mechanism, or (without --mechanism) all of them')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kcli;users;list' {
            [CompletionResult]::new('--zookeeper', '--zookeeper', [CompletionResultType]::ParameterName, 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Writes `/config/users/<user>` and a `/config/changes` notification, as Kafka''s `kafka-configs --zookeeper` does; works with every broker down')
            [CompletionResult]::new('--bootstrap-server', '--bootstrap-server', [CompletionResultType]::ParameterName, 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: DescribeUserScramCredentials there, AlterUserScramCredentials at the controller')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: a table or one line of text, or one JSON document (docs/users.md)')
            [CompletionResult]::new('--connection-timeout-ms', '--connection-timeout-ms', [CompletionResultType]::ParameterName, 'How long to wait for ZooKeeper or a broker to connect and answer, in ms')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kcli;users;add' {
            [CompletionResult]::new('--mechanism', '--mechanism', [CompletionResultType]::ParameterName, 'The SCRAM mechanism of the credential')
            [CompletionResult]::new('--iterations', '--iterations', [CompletionResultType]::ParameterName, 'Iterations of the password hash, 4096 to 16384 (Kafka''s bounds)')
            [CompletionResult]::new('--password-file', '--password-file', [CompletionResultType]::ParameterName, 'Read the password from this file (its first line; a trailing newline is not part of it)')
            [CompletionResult]::new('--zookeeper', '--zookeeper', [CompletionResultType]::ParameterName, 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Writes `/config/users/<user>` and a `/config/changes` notification, as Kafka''s `kafka-configs --zookeeper` does; works with every broker down')
            [CompletionResult]::new('--bootstrap-server', '--bootstrap-server', [CompletionResultType]::ParameterName, 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: DescribeUserScramCredentials there, AlterUserScramCredentials at the controller')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: a table or one line of text, or one JSON document (docs/users.md)')
            [CompletionResult]::new('--connection-timeout-ms', '--connection-timeout-ms', [CompletionResultType]::ParameterName, 'How long to wait for ZooKeeper or a broker to connect and answer, in ms')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('--password-stdin', '--password-stdin', [CompletionResultType]::ParameterName, 'Read the password from standard input (its first line)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kcli;users;remove' {
            [CompletionResult]::new('--mechanism', '--mechanism', [CompletionResultType]::ParameterName, 'Remove only this mechanism''s credential (it must exist); without it, every SCRAM credential of the user (at least one must exist)')
            [CompletionResult]::new('--zookeeper', '--zookeeper', [CompletionResultType]::ParameterName, 'The ZooKeeper ensemble, as Kafka''s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Writes `/config/users/<user>` and a `/config/changes` notification, as Kafka''s `kafka-configs --zookeeper` does; works with every broker down')
            [CompletionResult]::new('--bootstrap-server', '--bootstrap-server', [CompletionResultType]::ParameterName, 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: DescribeUserScramCredentials there, AlterUserScramCredentials at the controller')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format: a table or one line of text, or one JSON document (docs/users.md)')
            [CompletionResult]::new('--connection-timeout-ms', '--connection-timeout-ms', [CompletionResultType]::ParameterName, 'How long to wait for ZooKeeper or a broker to connect and answer, in ms')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kcli;users;help' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the users with SCRAM credentials (or the named ones): mechanism and iterations, and their quotas')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Set a user''s credential for one mechanism from a password, replacing any the user had for that mechanism and keeping the user''s other config (other mechanisms, quotas)')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove a user''s credential for one mechanism, or (without --mechanism) all of them')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kcli;users;help;list' {
            break
        }
        'kcli;users;help;add' {
            break
        }
        'kcli;users;help;remove' {
            break
        }
        'kcli;users;help;help' {
            break
        }
        'kcli;serve' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'A `server.properties` file in Kafka''s format')
            [CompletionResult]::new('--override', '--override', [CompletionResultType]::ParameterName, 'Set one broker config, overriding the file (repeatable), e.g. `--override listeners=PLAINTEXT://127.0.0.1:9093`')
            [CompletionResult]::new('--zookeeper', '--zookeeper', [CompletionResultType]::ParameterName, 'Join the cluster coordinated by this ZooKeeper ensemble: shorthand for `--override zookeeper.connect=HOST:PORT[,HOST:PORT...][/chroot]` (the chroot is created when missing). Without it, and without `zookeeper.connect`, the broker keeps its metadata in an embedded store and runs as a single-node cluster')
            [CompletionResult]::new('--log-format', '--log-format', [CompletionResultType]::ParameterName, 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'kcli;help' {
            [CompletionResult]::new('acls', 'acls', [CompletionResultType]::ParameterValue, 'List, add and remove ACLs, stored as Kafka''s AclAuthorizer stores them in ZooKeeper (/kafka-acl, /kafka-acl-extended), through ZooKeeper (--zookeeper, as `kafka-acls --authorizer-properties zookeeper.connect=...`) or through a broker (--bootstrap-server, the DescribeAcls, CreateAcls and DeleteAcls APIs)')
            [CompletionResult]::new('assign', 'assign', [CompletionResultType]::ParameterValue, 'Compute partition assignments with Kafka''s algorithm, rack-aware with --racks, offline or for the live cluster, and start, verify or cancel reassignments (docs/assign.md)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions for kcli to stdout')
            [CompletionResult]::new('describe-cluster', 'describe-cluster', [CompletionResultType]::ParameterValue, 'Show the cluster as ZooKeeper records it: brokers, the controller, topics and every partition''s leader, ISR and health flags (OFFLINE, UNDER-REPLICATED, UNDER-MIN-ISR, PREFERRED-NOT-LEADER, RECOVERING, REASSIGNING, MARKED-FOR-DELETION)')
            [CompletionResult]::new('dump-segment', 'dump-segment', [CompletionResultType]::ParameterValue, 'Dump Kafka log segments, indexes, producer snapshots and transaction indexes, as Kafka''s `kafka-dump-log.sh` (DumpLogSegments) prints them, or as JSON Lines or a summary table')
            [CompletionResult]::new('rebuild-index', 'rebuild-index', [CompletionResultType]::ParameterValue, 'Rebuild or verify the .index and .timeindex files of log segments')
            [CompletionResult]::new('users', 'users', [CompletionResultType]::ParameterValue, 'List, add and remove users'' SCRAM credentials, stored as Kafka stores them in ZooKeeper''s /config/users, through ZooKeeper (--zookeeper, as `kafka-configs --zookeeper`) or through a broker (--bootstrap-server, the SCRAM credential APIs)')
            [CompletionResult]::new('serve', 'serve', [CompletionResultType]::ParameterValue, 'Run a Kafka broker: a single node on 127.0.0.1:9092 with data in ./kcli-data, its cluster metadata kept in an embedded store in the first log dir. Stop it with Ctrl-C or SIGTERM for a clean shutdown')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kcli;help;acls' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the ACLs the filter selects (all of them without a resource or --principal)')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add ACLs: each --allow-principal and --deny-principal with each --operation and --host, on each resource given')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove the ACLs of the resources given that match the principals, operations and hosts (an option left out matches any), printing what was removed')
            break
        }
        'kcli;help;acls;list' {
            break
        }
        'kcli;help;acls;add' {
            break
        }
        'kcli;help;acls;remove' {
            break
        }
        'kcli;help;assign' {
            break
        }
        'kcli;help;completions' {
            break
        }
        'kcli;help;describe-cluster' {
            break
        }
        'kcli;help;dump-segment' {
            break
        }
        'kcli;help;rebuild-index' {
            break
        }
        'kcli;help;users' {
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the users with SCRAM credentials (or the named ones): mechanism and iterations, and their quotas')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Set a user''s credential for one mechanism from a password, replacing any the user had for that mechanism and keeping the user''s other config (other mechanisms, quotas)')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove a user''s credential for one mechanism, or (without --mechanism) all of them')
            break
        }
        'kcli;help;users;list' {
            break
        }
        'kcli;help;users;add' {
            break
        }
        'kcli;help;users;remove' {
            break
        }
        'kcli;help;serve' {
            break
        }
        'kcli;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
