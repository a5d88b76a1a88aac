#!/usr/bin/env node
// Drives a Kafka broker with the real kafkajs client and checks what comes back.
//
//     NODE_PATH=.tools/node/node_modules node tests/clients/kafkajs_check.js \
//         --bootstrap 127.0.0.1:9092 --topic t1 [--group g1]
//
// Admin: createTopics (3 partitions, waitForLeaders), fetchTopicMetadata, describeCluster,
// describeConfigs (topic), createPartitions 3 -> 4, fetchTopicOffsets, fetchTopicOffsetsByTimestamp.
// Producer (idempotent off, kafkajs' default): keys, a null key, a null value, headers with
// a repeated key, explicit timestamps, every partition, acks=-1 then acks=1, with and without
// gzip. The end offsets must then count every record. With --group, a consumer in that group
// subscribes from the beginning and must read every record back (keys, values, headers,
// partitions, offsets, timestamps), then commit; without it nothing is consumed (kafkajs has no
// group-less consumer).
//
// Prints one JSON line on stdout and exits 0 when everything matches; otherwise prints one line
// starting with "FAIL:" on stderr and exits 1 (2 on a usage error, 3 when the overall deadline of
// 60 s passes).
'use strict';

const { Kafka, CompressionTypes, ConfigResourceTypes, logLevel } = require('kafkajs');

const DEADLINE_MS = 60000;
const PARTITIONS = 3;

function die(code, msg) {
  process.stderr.write(msg.replace(/\n+$/, '') + '\n');
  process.exit(code);
}

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (!['--bootstrap', '--topic', '--group'].includes(flag) || value === undefined) {
      die(2, `usage: kafkajs_check.js --bootstrap HOST:PORT --topic TOPIC [--group GROUP] (bad: ${flag})`);
    }
    args[flag.slice(2)] = value;
  }
  if (!args.bootstrap || !args.topic) die(2, 'usage: --bootstrap and --topic are required');
  return args;
}

function check(cond, what) {
  if (!cond) throw new Error(what);
}

/** The records to produce: every partition, keys (some null), values (one null), headers. */
function records(now) {
  const out = [];
  for (let i = 0; i < 30; i++) {
    out.push({
      partition: i % PARTITIONS,
      key: i % 7 === 0 ? null : `key-${i}`,
      value: i === 5 ? null : `value-${i}-${'x'.repeat(i * 13)}`,
      headers: i % 3 === 0 ? { h: [`a${i}`, `b${i}`], other: 'o' } : undefined,
      timestamp: String(now - 1000 * (30 - i)),
    });
  }
  return out;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const kafka = new Kafka({
    clientId: 'kafkajs-check',
    brokers: [args.bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 100 },
  });
  const topic = args.topic;
  const admin = kafka.admin();
  await admin.connect();

  check(await admin.createTopics({
    topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }],
    waitForLeaders: true,
  }), 'createTopics returned false: the topic existed');
  const meta = await admin.fetchTopicMetadata({ topics: [topic] });
  check(meta.topics.length === 1 && meta.topics[0].partitions.length === PARTITIONS,
    `metadata: ${JSON.stringify(meta)}`);
  const cluster = await admin.describeCluster();
  check(cluster.brokers.length === 1 && cluster.controller === cluster.brokers[0].nodeId,
    `describeCluster: ${JSON.stringify(cluster)}`);
  const configs = await admin.describeConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
    includeSynonyms: false,
  });
  const entries = configs.resources[0].configEntries;
  const cleanup = entries.find((e) => e.configName === 'cleanup.policy');
  check(cleanup && cleanup.configValue === 'delete', `cleanup.policy: ${JSON.stringify(cleanup)}`);

  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const now = Date.now();
  const sent = records(now);
  const halves = [sent.slice(0, 15), sent.slice(15)];
  const plan = [
    { acks: -1, compression: CompressionTypes.None, messages: halves[0] },
    { acks: 1, compression: CompressionTypes.GZIP, messages: halves[1] },
  ];
  for (const p of plan) {
    const res = await producer.send({ topic, ...p });
    for (const r of res) check(r.errorCode === 0, `produce: ${JSON.stringify(r)}`);
  }
  await producer.disconnect();

  const offsets = await admin.fetchTopicOffsets(topic);
  const total = offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0);
  check(total === sent.length, `end offsets count ${total}, not ${sent.length}: ${JSON.stringify(offsets)}`);
  const byTime = await admin.fetchTopicOffsetsByTimestamp(topic, now - 1000 * 10);
  check(byTime.every((o) => Number(o.offset) >= 0), `offsets by time: ${JSON.stringify(byTime)}`);

  await admin.createPartitions({ topicPartitions: [{ topic, count: PARTITIONS + 1 }] });
  const meta2 = await admin.fetchTopicMetadata({ topics: [topic] });
  check(meta2.topics[0].partitions.length === PARTITIONS + 1, `after createPartitions: ${JSON.stringify(meta2)}`);

  let consumed = 0;
  if (args.group) {
    consumed = await consumeAll(kafka, args.group, topic, sent);
    // The consumer commits what it consumed when it stops.
    const ends = await admin.fetchTopicOffsets(topic);
    const [committed] = await admin.fetchOffsets({ groupId: args.group, topics: [topic] });
    for (const end of ends) {
      const c = committed.partitions.find((p) => p.partition === end.partition);
      // An empty partition has nothing to commit: -1.
      const want = end.high === '0' ? '-1' : end.high;
      check(c && c.offset === want, `committed ${JSON.stringify(committed)} != ends ${JSON.stringify(ends)}`);
    }
    const groups = await admin.listGroups();
    check(groups.groups.some((g) => g.groupId === args.group), `listGroups: ${JSON.stringify(groups)}`);
  }
  await admin.disconnect();
  process.stdout.write(JSON.stringify({ ok: true, produced: sent.length, consumed, partitions: PARTITIONS }) + '\n');
}

/** Subscribes in `group`, reads until every record came back once, commits, and leaves. */
async function consumeAll(kafka, group, topic, sent) {
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 1000 });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  const seen = new Map();
  let resolveDone;
  const done = new Promise((r) => { resolveDone = r; });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      const key = message.key === null ? null : message.key.toString();
      const value = message.value === null ? null : message.value.toString();
      const id = `${partition}/${message.offset}`;
      check(!seen.has(id), `record ${id} delivered twice`);
      seen.set(id, { partition, key, value, headers: message.headers, timestamp: message.timestamp });
      if (seen.size === sent.length) resolveDone();
    },
  });
  await done;
  await consumer.disconnect();
  for (const want of sent) {
    const got = [...seen.values()].find((r) => r.value === want.value && r.key === want.key
      && r.partition === want.partition);
    check(got, `record ${JSON.stringify(want)} not consumed`);
    check(got.timestamp === want.timestamp, `timestamp ${got.timestamp} != ${want.timestamp}`);
    if (want.headers) {
      const h = got.headers.h;
      check(Array.isArray(h) && h.map(String).join() === want.headers.h.join(),
        `repeated header: ${JSON.stringify(got.headers)}`);
    }
  }
  return seen.size;
}

setTimeout(() => die(3, `FAIL: kafkajs_check: overall deadline of ${DEADLINE_MS / 1000}s passed`),
  DEADLINE_MS).unref();
main().catch((err) => die(1, `FAIL: kafkajs_check: ${err && err.stack ? err.stack.split('\n')[0] : err}`));
