# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kcli_global_optspecs
    string join \n log-format= h/help V/version
end

function __fish_kcli_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kcli_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kcli_using_subcommand
    set -l cmd (__fish_kcli_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kcli -n "__fish_kcli_needs_command" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_needs_command" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "acls" -d 'List, add and remove ACLs, stored as Kafka\'s AclAuthorizer stores them in ZooKeeper (/kafka-acl, /kafka-acl-extended), through ZooKeeper (--zookeeper, as `kafka-acls --authorizer-properties zookeeper.connect=...`) or through a broker (--bootstrap-server, the DescribeAcls, CreateAcls and DeleteAcls APIs)'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "assign" -d 'Compute partition assignments with Kafka\'s algorithm, rack-aware with --racks, offline or for the live cluster, and start, verify or cancel reassignments (docs/assign.md)'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "completions" -d 'Print shell completions for kcli to stdout'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "describe-cluster" -d 'Show the cluster as ZooKeeper records it: brokers, the controller, topics and every partition\'s leader, ISR and health flags (OFFLINE, UNDER-REPLICATED, UNDER-MIN-ISR, PREFERRED-NOT-LEADER, RECOVERING, REASSIGNING, MARKED-FOR-DELETION)'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "dump-segment" -d 'Dump Kafka log segments, indexes, producer snapshots and transaction indexes, as Kafka\'s `kafka-dump-log.sh` (DumpLogSegments) prints them, or as JSON Lines or a summary table'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "rebuild-index" -d 'Rebuild or verify the .index and .timeindex files of log segments'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "users" -d 'List, add and remove users\' SCRAM credentials, stored as Kafka stores them in ZooKeeper\'s /config/users, through ZooKeeper (--zookeeper, as `kafka-configs --zookeeper`) or through a broker (--bootstrap-server, the SCRAM credential APIs)'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "serve" -d 'Run a Kafka broker: a single node on 127.0.0.1:9092 with data in ./kcli-data, its cluster metadata kept in an embedded store in the first log dir. Stop it with Ctrl-C or SIGTERM for a clean shutdown'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and not __fish_seen_subcommand_from list add remove help" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand acls; and not __fish_seen_subcommand_from list add remove help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and not __fish_seen_subcommand_from list add remove help" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and not __fish_seen_subcommand_from list add remove help" -f -a "list" -d 'List the ACLs the filter selects (all of them without a resource or --principal)'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and not __fish_seen_subcommand_from list add remove help" -f -a "add" -d 'Add ACLs: each --allow-principal and --deny-principal with each --operation and --host, on each resource given'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and not __fish_seen_subcommand_from list add remove help" -f -a "remove" -d 'Remove the ACLs of the resources given that match the principals, operations and hosts (an option left out matches any), printing what was removed'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and not __fish_seen_subcommand_from list add remove help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -l topic -d 'A topic (repeatable); `*` is every topic' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -l group -d 'A consumer group (repeatable); `*` is every group' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -l transactional-id -d 'A transactional id (repeatable); `*` is every one' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -l resource-pattern-type -d 'How the resource names match stored patterns: `any` (default: every pattern of those names), `match` (the ACLs that apply to them: literal, `*` and prefixes), `literal`, `prefixed`' -r -f -a "any\t'Every pattern type (filters only)'
match\t'The patterns that apply to a name: literal, wildcard and prefixes (filters only)'
literal\t'The name exactly (or `*`, every name)'
prefixed\t'Every name that starts with it'"
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -l principal -d 'Only the ACLs of this principal (`User:alice`)' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -l zookeeper -d 'The ZooKeeper ensemble, as Kafka\'s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Reads and writes the ACL znodes and change notifications as Kafka\'s AclAuthorizer does; works with every broker down' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -l bootstrap-server -d 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]); the first that answers is asked' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -l format -d 'Output format: a table, or one JSON document (docs/acls.md)' -r -f -a "text\t'A table (list) or one line saying what was done'
json\t'One JSON document'"
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -l connection-timeout-ms -d 'How long to wait for ZooKeeper or a broker to connect and answer, in ms' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -l cluster -d 'The cluster resource (`kafka-cluster`)'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l topic -d 'A topic (repeatable); `*` is every topic' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l group -d 'A consumer group (repeatable); `*` is every group' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l transactional-id -d 'A transactional id (repeatable); `*` is every one' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l resource-pattern-type -d 'The pattern type of the resources: `literal` (default) or `prefixed`' -r -f -a "any\t'Every pattern type (filters only)'
match\t'The patterns that apply to a name: literal, wildcard and prefixes (filters only)'
literal\t'The name exactly (or `*`, every name)'
prefixed\t'Every name that starts with it'"
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l allow-principal -d 'A principal allowed (repeatable), `type:name` (`User:alice`, `User:*` for everyone)' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l deny-principal -d 'A principal denied (repeatable); a deny beats every allow' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l operation -d 'An operation (repeatable): All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens (any case). Required for add' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l host -d 'A client host the ACLs apply from (repeatable, an IP address); `*` (the default for add) is every host' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l zookeeper -d 'The ZooKeeper ensemble, as Kafka\'s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Reads and writes the ACL znodes and change notifications as Kafka\'s AclAuthorizer does; works with every broker down' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l bootstrap-server -d 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]); the first that answers is asked' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l format -d 'Output format: a table, or one JSON document (docs/acls.md)' -r -f -a "text\t'A table (list) or one line saying what was done'
json\t'One JSON document'"
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l connection-timeout-ms -d 'How long to wait for ZooKeeper or a broker to connect and answer, in ms' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -l cluster -d 'The cluster resource (`kafka-cluster`)'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l topic -d 'A topic (repeatable); `*` is every topic' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l group -d 'A consumer group (repeatable); `*` is every group' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l transactional-id -d 'A transactional id (repeatable); `*` is every one' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l resource-pattern-type -d 'The pattern type of the resources: `literal` (default) or `prefixed`' -r -f -a "any\t'Every pattern type (filters only)'
match\t'The patterns that apply to a name: literal, wildcard and prefixes (filters only)'
literal\t'The name exactly (or `*`, every name)'
prefixed\t'Every name that starts with it'"
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l allow-principal -d 'A principal allowed (repeatable), `type:name` (`User:alice`, `User:*` for everyone)' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l deny-principal -d 'A principal denied (repeatable); a deny beats every allow' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l operation -d 'An operation (repeatable): All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens (any case). Required for add' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l host -d 'A client host the ACLs apply from (repeatable, an IP address); `*` (the default for add) is every host' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l zookeeper -d 'The ZooKeeper ensemble, as Kafka\'s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Reads and writes the ACL znodes and change notifications as Kafka\'s AclAuthorizer does; works with every broker down' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l bootstrap-server -d 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]); the first that answers is asked' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l format -d 'Output format: a table, or one JSON document (docs/acls.md)' -r -f -a "text\t'A table (list) or one line saying what was done'
json\t'One JSON document'"
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l connection-timeout-ms -d 'How long to wait for ZooKeeper or a broker to connect and answer, in ms' -r
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -l cluster -d 'The cluster resource (`kafka-cluster`)'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the ACLs the filter selects (all of them without a resource or --principal)'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from help" -f -a "add" -d 'Add ACLs: each --allow-principal and --deny-principal with each --operation and --host, on each resource given'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove the ACLs of the resources given that match the principals, operations and hosts (an option left out matches any), printing what was removed'
complete -c kcli -n "__fish_kcli_using_subcommand acls; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l brokers -d 'The brokers to assign to, without a cluster: comma-separated ids. May be omitted with --racks, which then names them' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l racks -d 'Each broker\'s rack, without a cluster: comma-separated BROKER:RACK pairs, e.g. `0:r1,1:r3,2:r3`. Brokers of --brokers not named here have no rack' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l partitions -d 'Partitions of the new topic to assign' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l replication-factor -d 'Replicas per partition of the new topic' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l rack-aware-mode -d 'How racks are used, with Kafka\'s meaning: enforced (every broker has a rack or none has; only some is an error), safe (racks only when every broker has one), disabled' -r -f -a "enforced\t'Every broker has a rack or none has'
safe\t'Racks only when every broker has one'
disabled\t'Racks ignored'"
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l start-index -d 'Fix the start index (the first partition\'s leader in the broker list) and, as Kafka\'s fixed start index does, the replica shift too' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l replica-shift -d 'Fix the replica shift alone (the distance of the second replica from the first)' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l seed -d 'Seed the random draws of start index and shift (java.util.Random\'s generator), so they can be repeated; without it a seed is drawn and printed' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l topic -d 'The new topic\'s name in the output' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l format -d 'Output format: tables and Kafka\'s JSON, or the proposal\'s reassignment JSON alone' -r -f -a "text\t'Tables, the balance summary and Kafka\'s JSON'
json\t'The proposal\'s reassignment JSON alone on stdout; the rest on stderr'"
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l zookeeper -d 'Take brokers, racks and topics from this ZooKeeper ensemble (Kafka\'s zookeeper.connect: HOST:PORT[,HOST:PORT...][/chroot]); with an action, start or verify through it (/admin/reassign_partitions)' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l bootstrap-server -d 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: brokers, racks and topics from Metadata (unless --zookeeper is given), partition sizes for the bytes moved, and the controller for --execute, --verify and --cancel' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l topics-to-move-json -d 'Propose new assignments for these existing topics: Kafka\'s `{"topics":[{"topic":"foo"}],"version":1}`' -r -F
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l broker-list -d 'Assign only to these of the cluster\'s brokers (comma-separated ids)' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l reassignment-json -d 'The reassignment, in Kafka\'s reassignment JSON (what --format json prints)' -r -F
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l throttle -d 'With --execute: throttle the moves\' replication to this many bytes per second (sets `leader.replication.throttled.rate` and `follower.replication.throttled.rate` on every broker a move touches, and the topics\' throttled replicas, as Kafka\'s tool does); --verify removes them once no move is in progress' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l connection-timeout-ms -d 'How long to wait for ZooKeeper or a broker to connect and answer, in ms' -r
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l minimize-movement -d 'With --topics-to-move-json: meet the rack and balance constraints of Kafka\'s proposal (same draws) while moving as few replicas as possible, and nothing when the current assignment already meets them'
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l execute -d 'Start the reassignment in --reassignment-json, after printing the current assignment for a rollback'
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l verify -d 'Report each partition of --reassignment-json as completed or still in progress; exit 1 unless all are completed'
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l preserve-throttles -d 'With --verify: leave the replication throttles in place even when no move is in progress (Kafka\'s --preserve-throttles)'
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l cancel -d 'Cancel the reassignments in progress of the partitions in --reassignment-json (needs --bootstrap-server: ZooKeeper\'s znode cannot cancel)'
complete -c kcli -n "__fish_kcli_using_subcommand assign" -l additional -d 'With --execute: start even though other reassignments are in progress'
complete -c kcli -n "__fish_kcli_using_subcommand assign" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand assign" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand completions" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand completions" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l zookeeper -d 'The ZooKeeper ensemble, as Kafka\'s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. A chroot that does not exist is an error' -r
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l data-dir -d 'The data dir of a `kcli serve` without ZooKeeper (its first log dir, ./kcli-data by default): its embedded metadata store read from disk, without locking or writing, whether the broker runs or not. Brokers and the controller are not kept on disk' -r -F
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l bootstrap-server -d 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: Metadata and DescribeConfigs. Epochs and reassignments are not known this way' -r
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l topic -d 'Show only this topic (repeatable); a topic that does not exist is an error' -r
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l min-isr -d 'The min.insync.replicas of topics that have neither their own nor a cluster default (/config/brokers/<default>) in ZooKeeper, for the UNDER-MIN-ISR flag' -r
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l format -d 'Output format: tables, or one JSON document (docs/describe-cluster.md)' -r -f -a "text\t'Tables: brokers, topics, partitions with their flags'
json\t'One JSON object: cluster_id, controller, brokers, topics with partitions'"
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l connection-timeout-ms -d 'How long to wait for ZooKeeper to accept the session, and again for the reads (or for a broker to connect and answer each request), in ms' -r
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l under-replicated -d 'Show only partitions whose ISR is smaller than their replication factor (with --offline: either)'
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l offline -d 'Show only partitions without a leader, or whose leader is not a live broker (with --under-replicated: either)'
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l max-bytes -d 'Read at most this many bytes of each .log file (Kafka\'s default: 2147483647, no limit)' -r
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l max-message-size -d 'The largest batch expected when verifying an offset index against its log (bytes)' -r
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l format -d 'Output format: Kafka\'s text, or JSON Lines (docs/dump-segment-json.md)' -r -f -a "text\t'Kafka\'s `kafka-dump-log.sh` text, line for line'
json\t'JSON Lines: one object per batch or index entry'"
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l deep-iteration -d 'Also print one line per record under its batch line'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l print-data-log -d 'Print record keys and payloads as UTF-8 text; implies --deep-iteration'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l skip-record-metadata -d 'Omit per-record metadata (offset, timestamp, sizes), keeping keys and payloads'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l offsets-decoder -d 'Decode keys and payloads as `__consumer_offsets` records (offset commits and group metadata, as JSON), as kafka-dump-log\'s --offsets-decoder; implies --print-data-log'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l transaction-log-decoder -d 'Decode keys and payloads as `__transaction_state` records, as kafka-dump-log\'s --transaction-log-decoder; implies --print-data-log (text format only)'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l verify-index-only -d 'For .index and .timeindex files: check every entry against the log without printing the entries'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l index-sanity-check -d 'For .index and .timeindex files: run only the sanity check the broker runs at startup to decide whether an index must be rebuilt'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l summary -d 'Print one summary table per file (batches, records, bytes, offset and timestamp ranges, codecs, compression ratio, invalid batches) instead of the batch lines'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l index-interval-bytes -d 'Bytes of log between index entries: the topic\'s `index.interval.bytes`' -r
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l format -d 'Output format: text (problems, then a summary table) or JSON Lines (one object per segment; docs/rebuild-index.md)' -r -f -a "text\t'Problems found, one line each, then a summary table'
json\t'One JSON object per segment, one per line'"
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l verify -d 'Check the existing indexes against the log without changing anything; exit 1 when an entry is wrong. Ends with a line counting the segments and indexes checked and the problems found'
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l strict -d 'With --verify: also require the indexes to be byte for byte what a rebuild writes'
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l dry-run -d 'Report what a rebuild would change without writing anything'
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l truncate-corrupt -d 'Cut a segment\'s corrupt or torn tail at the end of its valid data, as a broker\'s recovery does; without it the tail is only reported'
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand users; and not __fish_seen_subcommand_from list add remove help" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand users; and not __fish_seen_subcommand_from list add remove help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand users; and not __fish_seen_subcommand_from list add remove help" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand users; and not __fish_seen_subcommand_from list add remove help" -f -a "list" -d 'List the users with SCRAM credentials (or the named ones): mechanism and iterations, and their quotas'
complete -c kcli -n "__fish_kcli_using_subcommand users; and not __fish_seen_subcommand_from list add remove help" -f -a "add" -d 'Set a user\'s credential for one mechanism from a password, replacing any the user had for that mechanism and keeping the user\'s other config (other mechanisms, quotas)'
complete -c kcli -n "__fish_kcli_using_subcommand users; and not __fish_seen_subcommand_from list add remove help" -f -a "remove" -d 'Remove a user\'s credential for one mechanism, or (without --mechanism) all of them'
complete -c kcli -n "__fish_kcli_using_subcommand users; and not __fish_seen_subcommand_from list add remove help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from list" -l zookeeper -d 'The ZooKeeper ensemble, as Kafka\'s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Writes `/config/users/<user>` and a `/config/changes` notification, as Kafka\'s `kafka-configs --zookeeper` does; works with every broker down' -r
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from list" -l bootstrap-server -d 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: DescribeUserScramCredentials there, AlterUserScramCredentials at the controller' -r
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from list" -l format -d 'Output format: a table or one line of text, or one JSON document (docs/users.md)' -r -f -a "text\t'A table (list) or one line saying what was done'
json\t'One JSON document'"
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from list" -l connection-timeout-ms -d 'How long to wait for ZooKeeper or a broker to connect and answer, in ms' -r
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from list" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from add" -l mechanism -d 'The SCRAM mechanism of the credential' -r -f -a "SCRAM-SHA-256\t'SCRAM-SHA-256 (RFC 7677)'
SCRAM-SHA-512\t'SCRAM-SHA-512'"
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from add" -l iterations -d 'Iterations of the password hash, 4096 to 16384 (Kafka\'s bounds)' -r
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from add" -l password-file -d 'Read the password from this file (its first line; a trailing newline is not part of it)' -r -F
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from add" -l zookeeper -d 'The ZooKeeper ensemble, as Kafka\'s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Writes `/config/users/<user>` and a `/config/changes` notification, as Kafka\'s `kafka-configs --zookeeper` does; works with every broker down' -r
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from add" -l bootstrap-server -d 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: DescribeUserScramCredentials there, AlterUserScramCredentials at the controller' -r
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from add" -l format -d 'Output format: a table or one line of text, or one JSON document (docs/users.md)' -r -f -a "text\t'A table (list) or one line saying what was done'
json\t'One JSON document'"
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from add" -l connection-timeout-ms -d 'How long to wait for ZooKeeper or a broker to connect and answer, in ms' -r
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from add" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from add" -l password-stdin -d 'Read the password from standard input (its first line)'
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from add" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from add" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from remove" -l mechanism -d 'Remove only this mechanism\'s credential (it must exist); without it, every SCRAM credential of the user (at least one must exist)' -r -f -a "SCRAM-SHA-256\t'SCRAM-SHA-256 (RFC 7677)'
SCRAM-SHA-512\t'SCRAM-SHA-512'"
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from remove" -l zookeeper -d 'The ZooKeeper ensemble, as Kafka\'s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. Writes `/config/users/<user>` and a `/config/changes` notification, as Kafka\'s `kafka-configs --zookeeper` does; works with every broker down' -r
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from remove" -l bootstrap-server -d 'Brokers of the cluster (HOST:PORT[,HOST:PORT...]), the first that answers asked: DescribeUserScramCredentials there, AlterUserScramCredentials at the controller' -r
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from remove" -l format -d 'Output format: a table or one line of text, or one JSON document (docs/users.md)' -r -f -a "text\t'A table (list) or one line saying what was done'
json\t'One JSON document'"
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from remove" -l connection-timeout-ms -d 'How long to wait for ZooKeeper or a broker to connect and answer, in ms' -r
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from remove" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from remove" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from remove" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the users with SCRAM credentials (or the named ones): mechanism and iterations, and their quotas'
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from help" -f -a "add" -d 'Set a user\'s credential for one mechanism from a password, replacing any the user had for that mechanism and keeping the user\'s other config (other mechanisms, quotas)'
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from help" -f -a "remove" -d 'Remove a user\'s credential for one mechanism, or (without --mechanism) all of them'
complete -c kcli -n "__fish_kcli_using_subcommand users; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kcli -n "__fish_kcli_using_subcommand serve" -l config -d 'A `server.properties` file in Kafka\'s format' -r -F
complete -c kcli -n "__fish_kcli_using_subcommand serve" -l override -d 'Set one broker config, overriding the file (repeatable), e.g. `--override listeners=PLAINTEXT://127.0.0.1:9093`' -r
complete -c kcli -n "__fish_kcli_using_subcommand serve" -l zookeeper -d 'Join the cluster coordinated by this ZooKeeper ensemble: shorthand for `--override zookeeper.connect=HOST:PORT[,HOST:PORT...][/chroot]` (the chroot is created when missing). Without it, and without `zookeeper.connect`, the broker keeps its metadata in an embedded store and runs as a single-node cluster' -r
complete -c kcli -n "__fish_kcli_using_subcommand serve" -l log-format -d 'How log lines are written to stderr: text (coloured only when stderr is a terminal and NO_COLOR is unset) or json (one JSON object per line, for log shippers)' -r -f -a "text\t'One line per event: time, level, module, message, fields'
json\t'One JSON object per line: `timestamp`, `level`, `target`, `message` and the event\'s fields at the top level, and the spans it is in'"
complete -c kcli -n "__fish_kcli_using_subcommand serve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand serve" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from acls assign completions describe-cluster dump-segment rebuild-index users serve help" -f -a "acls" -d 'List, add and remove ACLs, stored as Kafka\'s AclAuthorizer stores them in ZooKeeper (/kafka-acl, /kafka-acl-extended), through ZooKeeper (--zookeeper, as `kafka-acls --authorizer-properties zookeeper.connect=...`) or through a broker (--bootstrap-server, the DescribeAcls, CreateAcls and DeleteAcls APIs)'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from acls assign completions describe-cluster dump-segment rebuild-index users serve help" -f -a "assign" -d 'Compute partition assignments with Kafka\'s algorithm, rack-aware with --racks, offline or for the live cluster, and start, verify or cancel reassignments (docs/assign.md)'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from acls assign completions describe-cluster dump-segment rebuild-index users serve help" -f -a "completions" -d 'Print shell completions for kcli to stdout'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from acls assign completions describe-cluster dump-segment rebuild-index users serve help" -f -a "describe-cluster" -d 'Show the cluster as ZooKeeper records it: brokers, the controller, topics and every partition\'s leader, ISR and health flags (OFFLINE, UNDER-REPLICATED, UNDER-MIN-ISR, PREFERRED-NOT-LEADER, RECOVERING, REASSIGNING, MARKED-FOR-DELETION)'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from acls assign completions describe-cluster dump-segment rebuild-index users serve help" -f -a "dump-segment" -d 'Dump Kafka log segments, indexes, producer snapshots and transaction indexes, as Kafka\'s `kafka-dump-log.sh` (DumpLogSegments) prints them, or as JSON Lines or a summary table'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from acls assign completions describe-cluster dump-segment rebuild-index users serve help" -f -a "rebuild-index" -d 'Rebuild or verify the .index and .timeindex files of log segments'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from acls assign completions describe-cluster dump-segment rebuild-index users serve help" -f -a "users" -d 'List, add and remove users\' SCRAM credentials, stored as Kafka stores them in ZooKeeper\'s /config/users, through ZooKeeper (--zookeeper, as `kafka-configs --zookeeper`) or through a broker (--bootstrap-server, the SCRAM credential APIs)'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from acls assign completions describe-cluster dump-segment rebuild-index users serve help" -f -a "serve" -d 'Run a Kafka broker: a single node on 127.0.0.1:9092 with data in ./kcli-data, its cluster metadata kept in an embedded store in the first log dir. Stop it with Ctrl-C or SIGTERM for a clean shutdown'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from acls assign completions describe-cluster dump-segment rebuild-index users serve help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kcli -n "__fish_kcli_using_subcommand help; and __fish_seen_subcommand_from acls" -f -a "list" -d 'List the ACLs the filter selects (all of them without a resource or --principal)'
complete -c kcli -n "__fish_kcli_using_subcommand help; and __fish_seen_subcommand_from acls" -f -a "add" -d 'Add ACLs: each --allow-principal and --deny-principal with each --operation and --host, on each resource given'
complete -c kcli -n "__fish_kcli_using_subcommand help; and __fish_seen_subcommand_from acls" -f -a "remove" -d 'Remove the ACLs of the resources given that match the principals, operations and hosts (an option left out matches any), printing what was removed'
complete -c kcli -n "__fish_kcli_using_subcommand help; and __fish_seen_subcommand_from users" -f -a "list" -d 'List the users with SCRAM credentials (or the named ones): mechanism and iterations, and their quotas'
complete -c kcli -n "__fish_kcli_using_subcommand help; and __fish_seen_subcommand_from users" -f -a "add" -d 'Set a user\'s credential for one mechanism from a password, replacing any the user had for that mechanism and keeping the user\'s other config (other mechanisms, quotas)'
complete -c kcli -n "__fish_kcli_using_subcommand help; and __fish_seen_subcommand_from users" -f -a "remove" -d 'Remove a user\'s credential for one mechanism, or (without --mechanism) all of them'
