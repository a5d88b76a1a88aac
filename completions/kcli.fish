# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kcli_global_optspecs
    string join \n h/help V/version
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

complete -c kcli -n "__fish_kcli_needs_command" -s h -l help -d 'Print help'
complete -c kcli -n "__fish_kcli_needs_command" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "completions" -d 'Print shell completions for kcli to stdout'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "describe-cluster" -d 'Show the cluster as ZooKeeper records it: brokers, the controller, topics and every partition\'s leader, ISR and health flags (OFFLINE, UNDER-REPLICATED, UNDER-MIN-ISR, PREFERRED-NOT-LEADER, RECOVERING, REASSIGNING, MARKED-FOR-DELETION)'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "dump-segment" -d 'Dump Kafka log segments, indexes, producer snapshots and transaction indexes, as Kafka\'s `kafka-dump-log.sh` (DumpLogSegments) prints them, or as JSON Lines or a summary table'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "rebuild-index" -d 'Rebuild or verify the .index and .timeindex files of log segments'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "serve" -d 'Run a Kafka broker: a single node on 127.0.0.1:9092 with data in ./kcli-data, its cluster metadata kept in an embedded store in the first log dir. Stop it with Ctrl-C or SIGTERM for a clean shutdown'
complete -c kcli -n "__fish_kcli_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kcli -n "__fish_kcli_using_subcommand completions" -s h -l help -d 'Print help'
complete -c kcli -n "__fish_kcli_using_subcommand completions" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l zookeeper -d 'The ZooKeeper ensemble, as Kafka\'s `zookeeper.connect`: HOST:PORT[,HOST:PORT...][/chroot]. A chroot that does not exist is an error' -r
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l topic -d 'Show only this topic (repeatable); a topic that does not exist is an error' -r
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l min-isr -d 'The min.insync.replicas of topics that have neither their own nor a cluster default (/config/brokers/<default>) in ZooKeeper, for the UNDER-MIN-ISR flag' -r
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l format -d 'Output format: tables, or one JSON document (docs/describe-cluster.md)' -r -f -a "text\t'Tables: brokers, topics, partitions with their flags'
json\t'One JSON object: cluster_id, controller, brokers, topics with partitions'"
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l connection-timeout-ms -d 'How long to wait for ZooKeeper to accept the session, and again for the reads, in ms' -r
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l under-replicated -d 'Show only partitions whose ISR is smaller than their replication factor (with --offline: either)'
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -l offline -d 'Show only partitions without a leader, or whose leader is not in /brokers/ids (with --under-replicated: either)'
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand describe-cluster" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l max-bytes -d 'Read at most this many bytes of each .log file (Kafka\'s default: 2147483647, no limit)' -r
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l max-message-size -d 'The largest batch expected when verifying an offset index against its log (bytes)' -r
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l format -d 'Output format: Kafka\'s text, or JSON Lines (docs/dump-segment-json.md)' -r -f -a "text\t'Kafka\'s `kafka-dump-log.sh` text, line for line'
json\t'JSON Lines: one object per batch or index entry'"
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l deep-iteration -d 'Also print one line per record under its batch line'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l print-data-log -d 'Print record keys and payloads as UTF-8 text; implies --deep-iteration'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l skip-record-metadata -d 'Omit per-record metadata (offset, timestamp, sizes), keeping keys and payloads'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l offsets-decoder -d 'Decode keys and payloads as `__consumer_offsets` records (offset commits and group metadata, as JSON), as kafka-dump-log\'s --offsets-decoder; implies --print-data-log'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l verify-index-only -d 'For .index and .timeindex files: check every entry against the log without printing the entries'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l index-sanity-check -d 'For .index and .timeindex files: run only the sanity check the broker runs at startup to decide whether an index must be rebuilt'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -l summary -d 'Print one summary table per file (batches, records, bytes, offset and timestamp ranges, codecs, compression ratio, invalid batches) instead of the batch lines'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand dump-segment" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l index-interval-bytes -d 'Bytes of log between index entries: the topic\'s `index.interval.bytes`' -r
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l format -d 'Output format: text (problems, then a summary table) or JSON Lines (one object per segment; docs/rebuild-index.md)' -r -f -a "text\t'Problems found, one line each, then a summary table'
json\t'One JSON object per segment, one per line'"
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l verify -d 'Check the existing indexes against the log without changing anything; exit 1 when an entry is wrong'
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l strict -d 'With --verify: also require the indexes to be byte for byte what a rebuild writes'
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l dry-run -d 'Report what a rebuild would change without writing anything'
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -l truncate-corrupt -d 'Cut a segment\'s corrupt or torn tail at the end of its valid data, as a broker\'s recovery does; without it the tail is only reported'
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kcli -n "__fish_kcli_using_subcommand rebuild-index" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand serve" -l config -d 'A `server.properties` file in Kafka\'s format' -r -F
complete -c kcli -n "__fish_kcli_using_subcommand serve" -l override -d 'Set one broker config, overriding the file (repeatable), e.g. `--override listeners=PLAINTEXT://127.0.0.1:9093`' -r
complete -c kcli -n "__fish_kcli_using_subcommand serve" -l zookeeper -d 'Join the cluster coordinated by this ZooKeeper ensemble: shorthand for `--override zookeeper.connect=HOST:PORT[,HOST:PORT...][/chroot]` (the chroot is created when missing). Without it, and without `zookeeper.connect`, the broker keeps its metadata in an embedded store and runs as a single-node cluster' -r
complete -c kcli -n "__fish_kcli_using_subcommand serve" -s h -l help -d 'Print help'
complete -c kcli -n "__fish_kcli_using_subcommand serve" -s V -l version -d 'Print version'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from completions describe-cluster dump-segment rebuild-index serve help" -f -a "completions" -d 'Print shell completions for kcli to stdout'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from completions describe-cluster dump-segment rebuild-index serve help" -f -a "describe-cluster" -d 'Show the cluster as ZooKeeper records it: brokers, the controller, topics and every partition\'s leader, ISR and health flags (OFFLINE, UNDER-REPLICATED, UNDER-MIN-ISR, PREFERRED-NOT-LEADER, RECOVERING, REASSIGNING, MARKED-FOR-DELETION)'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from completions describe-cluster dump-segment rebuild-index serve help" -f -a "dump-segment" -d 'Dump Kafka log segments, indexes, producer snapshots and transaction indexes, as Kafka\'s `kafka-dump-log.sh` (DumpLogSegments) prints them, or as JSON Lines or a summary table'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from completions describe-cluster dump-segment rebuild-index serve help" -f -a "rebuild-index" -d 'Rebuild or verify the .index and .timeindex files of log segments'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from completions describe-cluster dump-segment rebuild-index serve help" -f -a "serve" -d 'Run a Kafka broker: a single node on 127.0.0.1:9092 with data in ./kcli-data, its cluster metadata kept in an embedded store in the first log dir. Stop it with Ctrl-C or SIGTERM for a clean shutdown'
complete -c kcli -n "__fish_kcli_using_subcommand help; and not __fish_seen_subcommand_from completions describe-cluster dump-segment rebuild-index serve help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
