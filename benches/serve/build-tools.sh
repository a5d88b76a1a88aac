#!/usr/bin/env bash
# Builds librdkafka's `rdkafka_performance` and a small out-of-process mock cluster from the
# librdkafka source the rdkafka-sys crate ships (a `cargo build --tests` must have fetched it), into
# .tools/librdkafka-bench/. Idempotent. See ../shared/reference/performance-and-reliability.md §3.2.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=.tools/librdkafka-bench
[ -x "$dest/rdkafka_performance" ] && [ -x "$dest/mockcluster" ] && exit 0
src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/rdkafka-sys-*/librdkafka | head -1)
[ -d "$src" ] || { echo "librdkafka source not found; run cargo build --tests first" >&2; exit 2; }
command -v cc >/dev/null || { apt-get update -qq && apt-get install -y -qq build-essential >/dev/null; }
dpkg -s libzstd-dev >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq libzstd-dev >/dev/null; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src" "$work/librdkafka"
cd "$work/librdkafka"
./configure --disable-ssl --disable-gssapi --disable-curl --disable-lz4-ext >/dev/null
make -j2 libs >/dev/null
make -C examples rdkafka_performance >/dev/null
cat > mockcluster.c <<'C'
/* An out-of-process librdkafka mock cluster: mockcluster BROKERS SECONDS TOPIC PARTITIONS.
 * Prints the bootstrap servers, then serves until SECONDS pass. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "rdkafka.h"
#include "rdkafka_mock.h"
int main(int argc, char **argv) {
    char err[256];
    int brokers = argc > 1 ? atoi(argv[1]) : 1, secs = argc > 2 ? atoi(argv[2]) : 60;
    const char *topic = argc > 3 ? argv[3] : "perf";
    int parts = argc > 4 ? atoi(argv[4]) : 1;
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (!rk) { fprintf(stderr, "%s\n", err); return 1; }
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, brokers);
    rd_kafka_mock_topic_create(mc, topic, parts, brokers);
    printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
    fflush(stdout);
    sleep(secs);
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return 0;
}
C
cc -O2 -Isrc -o mockcluster mockcluster.c src/librdkafka.a -lm -lpthread -lz -lzstd -ldl -lrt
cd - >/dev/null
mkdir -p "$dest"
cp "$work/librdkafka/examples/rdkafka_performance" "$work/librdkafka/mockcluster" "$dest/"
echo "built $dest/rdkafka_performance and $dest/mockcluster" >&2
