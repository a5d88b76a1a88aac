// Drives a Kafka broker with the real Java client (kafka-clients 3.9.1) and checks what comes back.
//
//   javac -cp '.tools/kafka-3.9.1/*' -d "$tmp" tests/clients/java/ClientCheck.java
//   java -cp "$tmp:.tools/kafka-3.9.1/*" ClientCheck 127.0.0.1:9092 some-topic
//
// (or, without a compile step: java -cp '.tools/kafka-3.9.1/*' tests/clients/java/ClientCheck.java ...)
//
// AdminClient: createTopics (3 partitions, rf 1), describeTopics, describeCluster, describeConfigs
// (topic and broker), incrementalAlterConfigs (retention.ms, read back), createPartitions (to 4),
// deleteRecords (partition 0 before offset 2), and at the end deleteTopics + listTopics.
// KafkaProducer with the default settings (idempotence on, so InitProducerId first; acks=all):
// keys, a null key, a null value, headers with a repeated key and a null header value, explicit
// timestamps, every partition. Then a second idempotent producer writes three records to
// TOPIC-idem partition 0 (left in place for the caller to inspect), and a transactional producer
// calls initTransactions() (max.block.ms 10 s): its exception ("none" if it succeeded) and how
// long it took are reported as txn_error / txn_ms. KafkaConsumer
// without group.id: assign + seekToBeginning, poll until everything is seen, then
// beginningOffsets / endOffsets / offsetsForTimes.
//
// Prints one JSON line on stdout and exits 0 when everything matches; otherwise prints one line
// starting with "FAIL:" on stderr and exits 1 (2 on a usage error, 3 when the overall deadline
// passes).

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DeletedRecords;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class ClientCheck {
  static final int DEADLINE_S = 90;
  static final long CALL_S = 30; // every future is bounded by this
  static final int INITIAL_PARTITIONS = 3;
  static final int FINAL_PARTITIONS = 4;
  static final long DELETE_BEFORE = 2; // deleteRecords on partition 0 before this offset
  static final String RETENTION_MS = "123456789";

  static final class CheckFailed extends RuntimeException {
    CheckFailed(String msg) {
      super(msg);
    }
  }

  static void check(boolean cond, String msg) {
    if (!cond) throw new CheckFailed(msg);
  }

  static void die(int code, String msg) {
    System.out.flush();
    System.err.println(msg.replace('\n', ' '));
    System.err.flush();
    Runtime.getRuntime().halt(code);
  }

  /** One record we produce and expect back. */
  static final class Rec {
    final int i;
    final byte[] key;
    final byte[] value;
    final List<Header> headers;
    final Integer partitionAsked;
    final long ts;
    int partition = -1;
    long offset = -1;

    Rec(int i, byte[] key, byte[] value, List<Header> headers, Integer partition, long ts) {
      this.i = i;
      this.key = key;
      this.value = value;
      this.headers = headers;
      this.partitionAsked = partition;
      this.ts = ts;
    }
  }

  public static void main(String[] args) {
    if (args.length != 2) {
      System.err.println("usage: ClientCheck BOOTSTRAP TOPIC");
      Runtime.getRuntime().halt(2);
    }
    Thread watchdog =
        new Thread(
            () -> {
              try {
                Thread.sleep(DEADLINE_S * 1000L);
              } catch (InterruptedException e) {
                return;
              }
              die(3, "FAIL: ClientCheck: overall deadline of " + DEADLINE_S + "s passed");
            });
    watchdog.setDaemon(true);
    watchdog.start();
    try {
      String summary = run(args[0], args[1]);
      System.out.println(summary);
      System.out.flush();
      Runtime.getRuntime().halt(0);
    } catch (CheckFailed e) {
      die(1, "FAIL: ClientCheck: " + e.getMessage());
    } catch (ExecutionException e) {
      Throwable c = e.getCause() != null ? e.getCause() : e;
      die(1, "FAIL: ClientCheck: " + c.getClass().getSimpleName() + ": " + c.getMessage());
    } catch (Throwable e) {
      die(1, "FAIL: ClientCheck: " + e.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static String show(byte[] v) {
    if (v == null) return "null";
    if (v.length > 40) return "<" + v.length + " bytes>";
    return "\"" + new String(v, StandardCharsets.UTF_8) + "\"";
  }

  static String showHeaders(Iterable<Header> hs) {
    StringBuilder sb = new StringBuilder("[");
    for (Header h : hs) {
      if (sb.length() > 1) sb.append(", ");
      sb.append(h.key()).append('=').append(show(h.value()));
    }
    return sb.append(']').toString();
  }

  static boolean sameHeaders(List<Header> want, Header[] got) {
    if (want.size() != got.length) return false;
    for (int i = 0; i < got.length; i++) {
      if (!want.get(i).key().equals(got[i].key())) return false;
      if (!Arrays.equals(want.get(i).value(), got[i].value())) return false;
    }
    return true;
  }

  static String run(String bootstrap, String topic) throws Exception {
    long started = System.nanoTime();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("driver", "java");
    out.put("client_version", org.apache.kafka.common.utils.AppInfoParser.getVersion());
    out.put("topic", topic);

    Properties ap = new Properties();
    ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    ap.put(AdminClientConfig.CLIENT_ID_CONFIG, "kcli-java-admin");
    ap.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 15000);
    ap.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30000);
    ap.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);

    List<Rec> expected = new ArrayList<>();
    try (AdminClient admin = AdminClient.create(ap)) {
      // -- createTopics / describeTopics -----------------------------------------------
      admin
          .createTopics(List.of(new NewTopic(topic, INITIAL_PARTITIONS, (short) 1)))
          .all()
          .get(CALL_S, TimeUnit.SECONDS);
      TopicDescription td = waitForPartitions(admin, topic, INITIAL_PARTITIONS);
      check(!td.isInternal(), "describeTopics: topic is internal");
      check(td.topicId() != null && !td.topicId().toString().isEmpty(), "describeTopics: no topic id");
      for (TopicPartitionInfo p : td.partitions()) {
        check(p.leader() != null && p.leader().id() >= 0, "partition " + p.partition() + ": no leader");
        check(p.replicas().size() == 1 && p.isr().size() == 1,
            "partition " + p.partition() + ": replicas " + p.replicas() + " isr " + p.isr());
      }

      // -- describeCluster -------------------------------------------------------------
      DescribeClusterResult dc = admin.describeCluster();
      Collection<Node> nodes = dc.nodes().get(CALL_S, TimeUnit.SECONDS);
      Node controller = dc.controller().get(CALL_S, TimeUnit.SECONDS);
      String clusterId = dc.clusterId().get(CALL_S, TimeUnit.SECONDS);
      check(!nodes.isEmpty(), "describeCluster: no nodes");
      check(clusterId != null && !clusterId.isEmpty(), "describeCluster: no cluster id");
      Node broker = nodes.iterator().next();
      check(td.partitions().get(0).leader().id() == broker.id() || nodes.size() > 1,
          "partition 0 leader " + td.partitions().get(0).leader() + " is not the only node " + broker);
      out.put("cluster_id", clusterId);
      out.put("nodes", nodes.size());
      out.put("broker", broker.id() + "@" + broker.host() + ":" + broker.port());
      out.put("controller", controller == null ? null : controller.id());

      // -- describeConfigs (topic and broker) ------------------------------------------
      ConfigResource topicRes = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      ConfigResource brokerRes =
          new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(broker.id()));
      Map<ConfigResource, Config> cfgs =
          admin.describeConfigs(List.of(topicRes, brokerRes)).all().get(CALL_S, TimeUnit.SECONDS);
      Config tc = cfgs.get(topicRes);
      Config bc = cfgs.get(brokerRes);
      check(tc != null && bc != null, "describeConfigs: missing a resource");
      Map<String, String> topicCfg = new LinkedHashMap<>();
      for (String k : List.of("cleanup.policy", "retention.ms", "max.message.bytes", "segment.bytes")) {
        ConfigEntry e = tc.get(k);
        check(e != null, "describeConfigs(topic): no " + k);
        topicCfg.put(k, e.value());
      }
      check("delete".equals(topicCfg.get("cleanup.policy")),
          "topic cleanup.policy = " + topicCfg.get("cleanup.policy"));
      Map<String, String> brokerCfg = new LinkedHashMap<>();
      for (String k : List.of("message.max.bytes", "num.partitions", "log.retention.hours")) {
        ConfigEntry e = bc.get(k);
        check(e != null, "describeConfigs(broker): no " + k);
        brokerCfg.put(k, e.value());
      }
      out.put("topic_configs", topicCfg);
      out.put("broker_configs", brokerCfg);

      // -- incrementalAlterConfigs ------------------------------------------------------
      admin
          .incrementalAlterConfigs(
              Map.of(
                  topicRes,
                  List.of(
                      new AlterConfigOp(
                          new ConfigEntry("retention.ms", RETENTION_MS), AlterConfigOp.OpType.SET))))
          .all()
          .get(CALL_S, TimeUnit.SECONDS);
      ConfigEntry ret = null;
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      while (true) { // the new value reaches the broker's config cache asynchronously
        ret =
            admin
                .describeConfigs(List.of(topicRes))
                .all()
                .get(CALL_S, TimeUnit.SECONDS)
                .get(topicRes)
                .get("retention.ms");
        if ((ret != null && RETENTION_MS.equals(ret.value())) || System.nanoTime() > until) break;
        Thread.sleep(100);
      }
      check(ret != null && RETENTION_MS.equals(ret.value()),
          "retention.ms after incrementalAlterConfigs = " + (ret == null ? null : ret.value()));
      check(ret.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG,
          "retention.ms source = " + ret.source());
      out.put("retention_ms_after_alter", ret.value());

      // -- createPartitions -------------------------------------------------------------
      admin
          .createPartitions(Map.of(topic, NewPartitions.increaseTo(FINAL_PARTITIONS)))
          .all()
          .get(CALL_S, TimeUnit.SECONDS);
      waitForPartitions(admin, topic, FINAL_PARTITIONS);
      out.put("partitions", FINAL_PARTITIONS);

      // -- produce ----------------------------------------------------------------------
      long baseTs = (System.currentTimeMillis() / 1000) * 1000 - 3600_000L;
      int[] seq = {0};
      java.util.function.BiConsumer<Object[], Integer> add =
          (kv, part) -> {
            int i = seq[0]++;
            @SuppressWarnings("unchecked")
            List<Header> hs = kv.length > 2 ? (List<Header>) kv[2] : List.of();
            expected.add(new Rec(i, (byte[]) kv[0], (byte[]) kv[1], hs, part, baseTs + i * 1000L));
          };
      for (int p = 0; p < FINAL_PARTITIONS; p++) {
        add.accept(new Object[] {b("k-p" + p), b("v-p" + p)}, p);
        add.accept(new Object[] {b("k2-p" + p), b("v2-p" + p)}, p);
      }
      add.accept(new Object[] {b("k-p0-third"), b("v-p0-third")}, 0); // p0 needs > DELETE_BEFORE
      for (int n = 0; n < 8; n++) add.accept(new Object[] {b("key-" + n), b("value-" + n)}, null);
      add.accept(new Object[] {b("tombstone"), null}, null);
      add.accept(new Object[] {b("empty"), new byte[0]}, null);
      add.accept(new Object[] {null, b("no-key")}, 1);
      add.accept(
          new Object[] {
            b("hdr"),
            b("with-headers"),
            List.<Header>of(
                new RecordHeader("h1", b("one")),
                new RecordHeader("dup", b("first")),
                new RecordHeader("nullhdr", (byte[]) null),
                new RecordHeader("dup", b("second")),
                new RecordHeader("empty", new byte[0]),
                new RecordHeader("dup", b("third")))
          },
          2);
      add.accept(
          new Object[] {b("hdr-null-value"), null, List.<Header>of(new RecordHeader("only", b("x")))},
          3);

      Properties pp = new Properties();
      pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      pp.put(ProducerConfig.CLIENT_ID_CONFIG, "kcli-java-producer");
      // enable.idempotence and retries stay at their defaults: the producer is idempotent.
      pp.put(ProducerConfig.ACKS_CONFIG, "all");
      pp.put(ProducerConfig.LINGER_MS_CONFIG, 5);
      pp.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20000);
      pp.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 15000);
      pp.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 20000);
      pp.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
      pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
      pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
      try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(pp)) {
        int seen = producer.partitionsFor(topic).size();
        check(seen == FINAL_PARTITIONS, "producer.partitionsFor = " + seen + " partitions");
        List<Future<RecordMetadata>> futs = new ArrayList<>();
        for (Rec r : expected) {
          futs.add(
              producer.send(
                  new ProducerRecord<>(topic, r.partitionAsked, r.ts, r.key, r.value, r.headers)));
        }
        producer.flush();
        for (int i = 0; i < futs.size(); i++) {
          RecordMetadata md = futs.get(i).get(CALL_S, TimeUnit.SECONDS);
          Rec r = expected.get(i);
          check(md.topic().equals(topic), "RecordMetadata.topic " + md.topic());
          check(r.partitionAsked == null || md.partition() == r.partitionAsked,
              "record " + i + " went to partition " + md.partition() + ", asked " + r.partitionAsked);
          check(md.hasOffset() && md.offset() >= 0, "record " + i + ": no offset");
          check(md.timestamp() == r.ts, "record " + i + ": RecordMetadata.timestamp " + md.timestamp());
          r.partition = md.partition();
          r.offset = md.offset();
        }
        producer.close(Duration.ofSeconds(10));
      }
      Map<Integer, List<Rec>> byTp = new TreeMap<>();
      for (int p = 0; p < FINAL_PARTITIONS; p++) byTp.put(p, new ArrayList<>());
      for (Rec r : expected) byTp.get(r.partition).add(r);
      for (Map.Entry<Integer, List<Rec>> e : byTp.entrySet()) {
        List<Rec> rs = e.getValue();
        for (int j = 0; j < rs.size(); j++) {
          check(rs.get(j).offset == j,
              "partition " + e.getKey() + ": record " + rs.get(j).i + " got offset " + rs.get(j).offset
                  + ", expected " + j);
        }
      }
      out.put("produced", expected.size());

      // -- deleteRecords ----------------------------------------------------------------
      TopicPartition tp0 = new TopicPartition(topic, 0);
      DeletedRecords dr =
          admin
              .deleteRecords(Map.of(tp0, RecordsToDelete.beforeOffset(DELETE_BEFORE)))
              .lowWatermarks()
              .get(tp0)
              .get(CALL_S, TimeUnit.SECONDS);
      check(dr.lowWatermark() == DELETE_BEFORE,
          "deleteRecords low watermark " + dr.lowWatermark() + ", expected " + DELETE_BEFORE);
      out.put("delete_records_low_watermark", dr.lowWatermark());

      // -- consume ----------------------------------------------------------------------
      Properties cp = new Properties();
      cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      cp.put(ConsumerConfig.CLIENT_ID_CONFIG, "kcli-java-consumer");
      cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
      cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      cp.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 15000);
      cp.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30000);
      cp.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 200);
      cp.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
      cp.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
      cp.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
      Map<String, Long> endOut = new TreeMap<>();
      Map<String, Long> beginOut = new TreeMap<>();
      int consumed = 0;
      try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp)) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < FINAL_PARTITIONS; p++) tps.add(new TopicPartition(topic, p));
        check(consumer.partitionsFor(topic, Duration.ofSeconds(CALL_S)).size() == FINAL_PARTITIONS,
            "consumer.partitionsFor: wrong partition count");
        consumer.assign(tps);
        consumer.seekToBeginning(tps);

        Map<String, Rec> want = new HashMap<>();
        for (Rec r : expected) {
          if (r.partition == 0 && r.offset < DELETE_BEFORE) continue; // deleted
          want.put(r.partition + "/" + r.offset, r);
        }
        Map<String, ConsumerRecord<byte[], byte[]>> got = new HashMap<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (got.size() < want.size()) {
          if (System.nanoTime() > deadline) {
            List<String> missing = new ArrayList<>(want.keySet());
            missing.removeAll(got.keySet());
            Collections.sort(missing);
            throw new CheckFailed("consumed " + got.size() + " of " + want.size()
                + " records within 30 s; missing (partition/offset): "
                + missing.subList(0, Math.min(10, missing.size())));
          }
          ConsumerRecords<byte[], byte[]> recs = consumer.poll(Duration.ofMillis(500));
          for (ConsumerRecord<byte[], byte[]> cr : recs) {
            String k = cr.partition() + "/" + cr.offset();
            check(cr.topic().equals(topic), "consumed topic " + cr.topic());
            check(want.containsKey(k), "unexpected record at partition/offset " + k);
            check(!got.containsKey(k), "record at partition/offset " + k + " seen twice");
            got.put(k, cr);
          }
        }
        for (Map.Entry<String, Rec> e : want.entrySet()) {
          Rec r = e.getValue();
          ConsumerRecord<byte[], byte[]> cr = got.get(e.getKey());
          String where = "partition/offset " + e.getKey();
          check(Arrays.equals(cr.key(), r.key), where + ": key " + show(cr.key()) + ", expected " + show(r.key));
          check(Arrays.equals(cr.value(), r.value),
              where + ": value " + show(cr.value()) + ", expected " + show(r.value));
          Header[] hs = cr.headers().toArray();
          check(sameHeaders(r.headers, hs),
              where + ": headers " + showHeaders(Arrays.asList(hs)) + ", expected " + showHeaders(r.headers));
          check(cr.timestamp() == r.ts && cr.timestampType() == TimestampType.CREATE_TIME,
              where + ": timestamp " + cr.timestamp() + " " + cr.timestampType() + ", expected " + r.ts
                  + " CreateTime");
        }
        consumed = got.size();

        // -- offsets --------------------------------------------------------------------
        Duration t = Duration.ofSeconds(CALL_S);
        Map<TopicPartition, Long> begin = consumer.beginningOffsets(tps, t);
        Map<TopicPartition, Long> end = consumer.endOffsets(tps, t);
        for (TopicPartition tp : tps) {
          long wantBegin = tp.partition() == 0 ? DELETE_BEFORE : 0;
          long wantEnd = byTp.get(tp.partition()).size();
          check(begin.get(tp) == wantBegin,
              "beginningOffsets[" + tp.partition() + "] = " + begin.get(tp) + ", expected " + wantBegin);
          check(end.get(tp) == wantEnd,
              "endOffsets[" + tp.partition() + "] = " + end.get(tp) + ", expected " + wantEnd);
          beginOut.put(Integer.toString(tp.partition()), begin.get(tp));
          endOut.put(Integer.toString(tp.partition()), end.get(tp));
        }
        // The last record of each partition, asked for with its timestamp minus 1 ms.
        Map<TopicPartition, Long> q = new HashMap<>();
        for (TopicPartition tp : tps) {
          List<Rec> rs = byTp.get(tp.partition());
          q.put(tp, rs.get(rs.size() - 1).ts - 1);
        }
        Map<TopicPartition, OffsetAndTimestamp> oft = consumer.offsetsForTimes(q, t);
        for (TopicPartition tp : tps) {
          List<Rec> rs = byTp.get(tp.partition());
          Rec last = rs.get(rs.size() - 1);
          OffsetAndTimestamp o = oft.get(tp);
          check(o != null && o.offset() == last.offset && o.timestamp() == last.ts,
              "offsetsForTimes[" + tp.partition() + "] = " + o + ", expected offset " + last.offset
                  + " timestamp " + last.ts);
        }
        // Timestamp 0: the first record still there (partition 0 starts after deleteRecords).
        Map<TopicPartition, Long> q0 = new HashMap<>();
        for (TopicPartition tp : tps) q0.put(tp, 0L);
        Map<TopicPartition, OffsetAndTimestamp> oft0 = consumer.offsetsForTimes(q0, t);
        for (TopicPartition tp : tps) {
          long wantOff = tp.partition() == 0 ? DELETE_BEFORE : 0;
          OffsetAndTimestamp o = oft0.get(tp);
          check(o != null && o.offset() == wantOff,
              "offsetsForTimes(0)[" + tp.partition() + "] = " + o + ", expected offset " + wantOff);
        }
        // Past the last timestamp: no answer (null).
        long lastTs = expected.get(expected.size() - 1).ts;
        Map<TopicPartition, Long> qLate = new HashMap<>();
        for (TopicPartition tp : tps) qLate.put(tp, lastTs + 60_000);
        Map<TopicPartition, OffsetAndTimestamp> oftLate = consumer.offsetsForTimes(qLate, t);
        for (TopicPartition tp : tps) {
          check(oftLate.get(tp) == null,
              "offsetsForTimes(after the end)[" + tp.partition() + "] = " + oftLate.get(tp) + ", expected null");
        }
        consumer.close(Duration.ofSeconds(10));
      }
      out.put("consumed", consumed);
      out.put("beginning_offsets", beginOut);
      out.put("end_offsets", endOut);

      // -- a second idempotent producer, to TOPIC-idem partition 0 ---------------------
      Properties ip = new Properties();
      ip.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      ip.put(ProducerConfig.CLIENT_ID_CONFIG, "kcli-java-idempotent");
      ip.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 20000);
      ip.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
      ip.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
      try (KafkaProducer<byte[], byte[]> idem = new KafkaProducer<>(ip)) {
        for (int i = 0; i < 3; i++) {
          RecordMetadata md =
              idem.send(new ProducerRecord<>(topic + "-idem", 0, null, b("idem-" + i)))
                  .get(CALL_S, TimeUnit.SECONDS);
          check(md.offset() == i, "idempotent record " + i + " got offset " + md.offset());
        }
        idem.close(Duration.ofSeconds(10));
      }
      out.put("idempotent_produced", 3);

      // -- a transactional producer initializes ----------------------------------------
      Properties tp = new Properties();
      tp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      tp.put(ProducerConfig.CLIENT_ID_CONFIG, "kcli-java-transactional");
      tp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "kcli-java-txn");
      // A broker that made the client retry would end in a TimeoutException after this.
      tp.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10000);
      tp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
      tp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
      KafkaProducer<byte[], byte[]> txn = new KafkaProducer<>(tp);
      long txnStart = System.nanoTime();
      String txnError = null;
      try {
        txn.initTransactions();
      } catch (Exception e) {
        txnError = e.getClass().getName() + ": " + e.getMessage();
      }
      long txnMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - txnStart);
      txn.close(Duration.ofSeconds(5));
      // Reported, not checked here: the caller expects "none".
      out.put("txn_error", txnError == null ? "none" : txnError);
      out.put("txn_ms", txnMs);

      // -- deleteTopics -----------------------------------------------------------------
      admin.deleteTopics(List.of(topic)).all().get(CALL_S, TimeUnit.SECONDS);
      long until2 = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      Set<String> names;
      while (true) { // metadata catches up with the controller asynchronously
        names = admin.listTopics().names().get(CALL_S, TimeUnit.SECONDS);
        if (!names.contains(topic) || System.nanoTime() > until2) break;
        Thread.sleep(100);
      }
      check(!names.contains(topic), "topic still listed 15 s after deleteTopics");
      out.put("deleted", true);
      admin.close(Duration.ofSeconds(10));
    }
    out.put("elapsed_s", Math.round((System.nanoTime() - started) / 1e7) / 100.0);
    out.put("ok", true);
    return json(out);
  }

  static TopicDescription waitForPartitions(AdminClient admin, String topic, int n) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    TopicDescription td = null;
    while (true) {
      try {
        td = admin.describeTopics(List.of(topic)).allTopicNames().get(CALL_S, TimeUnit.SECONDS).get(topic);
      } catch (ExecutionException e) {
        // UnknownTopicOrPartition right after createTopics: metadata not there yet.
        if (System.nanoTime() > until) throw e;
      }
      if (td != null && td.partitions().size() == n
          && td.partitions().stream().allMatch(p -> p.leader() != null)) {
        return td;
      }
      if (System.nanoTime() > until) {
        throw new CheckFailed("describeTopics: expected " + n + " partitions with leaders, got "
            + (td == null ? "nothing" : td.partitions()));
      }
      Thread.sleep(100);
    }
  }

  // -- a tiny JSON writer, so the program needs nothing beyond kafka-clients --------------
  static String json(Object o) {
    StringBuilder sb = new StringBuilder();
    write(sb, o);
    return sb.toString();
  }

  static void write(StringBuilder sb, Object o) {
    if (o == null) {
      sb.append("null");
    } else if (o instanceof Map) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) o).entrySet()) {
        if (!first) sb.append(", ");
        first = false;
        write(sb, String.valueOf(e.getKey()));
        sb.append(": ");
        write(sb, e.getValue());
      }
      sb.append('}');
    } else if (o instanceof Number || o instanceof Boolean) {
      sb.append(o);
    } else {
      String s = o.toString();
      sb.append('"');
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (c == '"' || c == '\\') sb.append('\\').append(c);
        else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
        else sb.append(c);
      }
      sb.append('"');
    }
  }
}
