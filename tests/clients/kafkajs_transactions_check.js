#!/usr/bin/env node
// Drives a Kafka broker's transactions with the real kafkajs client.
//
//     NODE_PATH=.tools/node/node_modules node tests/clients/kafkajs_transactions_check.js \
//         --bootstrap 127.0.0.1:9092 --topic t1
//
// Creates the topic (2 partitions). A transactional producer (idempotent, one request in
// flight, as kafkajs requires) commits, aborts and commits again on both partitions, the last
// transaction also sending a group's offsets (sendOffsets). A consumer in another group, with
// kafkajs' default read_committed isolation, reads from the beginning: it must see exactly the
// committed records; the admin's fetchOffsets must show the transaction's offsets.
//
// Prints one JSON line on stdout and exits 0 when everything matches; otherwise prints one line
// starting with "FAIL:" on stderr and exits 1 (2 on a usage error, 3 when the overall deadline of
// 60 s passes).
'use strict';

const { Kafka, logLevel } = require('kafkajs');

const DEADLINE_MS = 60000;
const PARTITIONS = 2;
const GROUP = 'kj-txn-group';

function die(code, msg) {
  process.stderr.write(msg.replace(/\n+$/, '') + '\n');
  process.exit(code);
}

function check(cond, what) {
  if (!cond) throw new Error(what);
}

async function run(bootstrap, topic) {
  const kafka = new Kafka({ clientId: 'kj-txn', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
  const producer = kafka.producer({
    transactionalId: 'kj-txn',
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  const plan = [['c1', 3, true, null], ['a1', 2, false, '9'], ['c2', 2, true, '4']];
  for (const [tag, count, commit, offset] of plan) {
    const txn = await producer.transaction();
    for (let p = 0; p < PARTITIONS; p++) {
      const messages = [];
      for (let i = 0; i < count; i++) messages.push({ value: `${tag}-${p}-${i}`, partition: p });
      await txn.send({ topic, messages });
    }
    if (offset !== null) {
      await txn.sendOffsets({
        consumerGroupId: GROUP,
        topics: [{ topic, partitions: [...Array(PARTITIONS).keys()].map((p) => ({ partition: p, offset })) }],
      });
    }
    if (commit) await txn.commit();
    else await txn.abort();
  }
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: 'kj-txn-reader' });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen = {};
  for (let p = 0; p < PARTITIONS; p++) seen[p] = [];
  const want = 2 * (3 + 2);
  await new Promise((resolve, reject) => {
    let total = 0;
    consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          seen[partition].push(message.value.toString());
          total += 1;
          if (total >= want) setTimeout(resolve, 1000);
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  for (let p = 0; p < PARTITIONS; p++) {
    const expected = [0, 1, 2].map((i) => `c1-${p}-${i}`).concat([0, 1].map((i) => `c2-${p}-${i}`));
    check(JSON.stringify(seen[p]) === JSON.stringify(expected),
      `read_committed partition ${p}: ${JSON.stringify(seen[p])}`);
  }
  const offsets = await admin.fetchOffsets({ groupId: GROUP, topics: [topic] });
  const parts = offsets[0].partitions.map((x) => x.offset);
  check(parts.length === PARTITIONS && parts.every((o) => o === '4'), `group offsets: ${JSON.stringify(offsets)}`);
  await admin.disconnect();
  return { ok: true, committed: want };
}

function main() {
  const argv = process.argv.slice(2);
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!['--bootstrap', '--topic'].includes(argv[i]) || argv[i + 1] === undefined) {
      die(2, 'usage: kafkajs_transactions_check.js --bootstrap HOST:PORT --topic TOPIC');
    }
    args[argv[i].slice(2)] = argv[i + 1];
  }
  if (!args.bootstrap || !args.topic) die(2, 'usage: --bootstrap and --topic are required');
  setTimeout(() => die(3, `FAIL: kafkajs_transactions_check: overall deadline of ${DEADLINE_MS / 1000}s passed`), DEADLINE_MS).unref();
  run(args.bootstrap, args.topic)
    .then((summary) => {
      process.stdout.write(JSON.stringify(summary) + '\n');
      process.exit(0);
    })
    .catch((e) => die(1, `FAIL: kafkajs_transactions_check: ${e && e.stack ? e.stack.split('\n')[0] : e}`));
}

main();
