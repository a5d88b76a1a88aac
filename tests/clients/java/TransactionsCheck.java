// kafka-clients 3.9.1 against a broker with transactions: a transactional producer commits,
// aborts and commits again across every partition of TOPIC (created here with REPLICAS
// replicas and min.insync.replicas MIN_ISR), then a second producer with the same
// transactional.id fences the first, whose next transaction must fail with
// ProducerFencedException. A read_committed consumer must read exactly the committed records
// (each once, in order per partition) and a read_uncommitted one every record, aborted ones
// included; the read_committed end offsets are the last stable offsets, which reach the log
// end once every transaction is decided. An open transaction holds the read_committed end
// offset of its partition back until it commits. Offsets sent to transactions
// (sendOffsetsToTransaction) become the group's committed offsets with a commit, not with an
// abort, and a read_committed consumer cannot read them while their transaction is open
// (UNSTABLE_OFFSET_COMMIT, retried until its timeout).
//
// Usage: TransactionsCheck BOOTSTRAP TOPIC REPLICAS MIN_ISR (an existing TOPIC is used as it is)
// Prints one JSON line on stdout and exits 0 when everything matches; otherwise prints one line
// starting with "FAIL:" on stderr and exits 1 (2 on a usage error, 3 when the overall deadline
// passes).

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class TransactionsCheck {
  static final int DEADLINE_S = 150;
  static final long CALL_S = 60;
  static final int PARTITIONS = 3;
  static final String TXN_ID = "kcli-java-txn-check";

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

  public static void main(String[] args) {
    if (args.length != 4) {
      System.err.println("usage: TransactionsCheck BOOTSTRAP TOPIC REPLICAS MIN_ISR");
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
              die(3, "FAIL: TransactionsCheck: overall deadline of " + DEADLINE_S + "s passed");
            });
    watchdog.setDaemon(true);
    watchdog.start();
    try {
      String summary =
          run(args[0], args[1], Short.parseShort(args[2]), Integer.parseInt(args[3]));
      System.out.println(summary);
      System.out.flush();
      Runtime.getRuntime().halt(0);
    } catch (CheckFailed e) {
      die(1, "FAIL: TransactionsCheck: " + e.getMessage());
    } catch (ExecutionException e) {
      Throwable c = e.getCause() != null ? e.getCause() : e;
      die(1, "FAIL: TransactionsCheck: " + c.getClass().getSimpleName() + ": " + c.getMessage());
    } catch (Throwable e) {
      die(1, "FAIL: TransactionsCheck: " + e.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static KafkaProducer<byte[], byte[]> producer(String bootstrap, String clientId) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TXN_ID);
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 60000);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    return new KafkaProducer<>(p);
  }

  static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, String isolation) {
    return consumer(bootstrap, isolation, null);
  }

  static KafkaConsumer<byte[], byte[]> consumer(String bootstrap, String isolation, String group) {
    Properties c = new Properties();
    if (group != null) c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.put(ConsumerConfig.CLIENT_ID_CONFIG, "kcli-java-" + isolation);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return new KafkaConsumer<>(c);
  }

  /** One transaction of `count` records per partition, named `tag`; committed or aborted. */
  static void transaction(
      KafkaProducer<byte[], byte[]> p, String topic, String tag, int count, boolean commit)
      throws Exception {
    p.beginTransaction();
    for (int part = 0; part < PARTITIONS; part++) {
      for (int i = 0; i < count; i++) {
        p.send(new ProducerRecord<>(topic, part, b("k"), b(tag + "-" + part + "-" + i)));
      }
    }
    if (commit) {
      p.commitTransaction();
    } else {
      p.flush();
      p.abortTransaction();
    }
  }

  /** Every record up to the consumer's end offsets, values by partition. */
  static Map<Integer, List<String>> readAll(KafkaConsumer<byte[], byte[]> c, String topic) {
    List<TopicPartition> tps = new ArrayList<>();
    for (int part = 0; part < PARTITIONS; part++) tps.add(new TopicPartition(topic, part));
    c.assign(tps);
    c.seekToBeginning(tps);
    Map<TopicPartition, Long> end = c.endOffsets(tps, Duration.ofSeconds(CALL_S));
    Map<Integer, List<String>> out = new HashMap<>();
    for (int part = 0; part < PARTITIONS; part++) out.put(part, new ArrayList<>());
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(CALL_S);
    while (true) {
      boolean done = true;
      for (TopicPartition tp : tps) done &= c.position(tp) >= end.get(tp);
      if (done) break;
      check(System.nanoTime() < until, "reading to " + end + " took over " + CALL_S + " s");
      for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
        out.get(r.partition()).add(new String(r.value(), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  static String run(String bootstrap, String topic, short replicas, int minIsr) throws Exception {
    Properties ap = new Properties();
    ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (AdminClient admin = AdminClient.create(ap)) {
      NewTopic nt = new NewTopic(topic, PARTITIONS, replicas);
      nt.configs(Map.of("min.insync.replicas", Integer.toString(minIsr)));
      try {
        admin.createTopics(List.of(nt)).all().get(CALL_S, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        // A topic the caller made with its own placement is used as it is.
        if (!(e.getCause() instanceof TopicExistsException)) throw e;
      }
    }
    long started = System.nanoTime();
    KafkaProducer<byte[], byte[]> first = producer(bootstrap, "kcli-java-txn-1");
    first.initTransactions();
    transaction(first, topic, "c1", 4, true);
    transaction(first, topic, "a1", 3, false);
    transaction(first, topic, "c2", 2, true);
    // An open transaction holds the read_committed end offsets back.
    first.beginTransaction();
    first.send(new ProducerRecord<>(topic, 0, b("k"), b("c3-0-0"))).get(CALL_S, TimeUnit.SECONDS);
    TopicPartition p0 = new TopicPartition(topic, 0);
    long openLso;
    long openHw;
    try (KafkaConsumer<byte[], byte[]> rc = consumer(bootstrap, "read_committed");
        KafkaConsumer<byte[], byte[]> ru = consumer(bootstrap, "read_uncommitted")) {
      openLso = rc.endOffsets(List.of(p0), Duration.ofSeconds(CALL_S)).get(p0);
      openHw = ru.endOffsets(List.of(p0), Duration.ofSeconds(CALL_S)).get(p0);
    }
    check(openLso < openHw, "an open transaction: LSO " + openLso + " vs HW " + openHw);
    first.commitTransaction();
    long txnMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

    // A second producer with the same id fences the first.
    KafkaProducer<byte[], byte[]> second = producer(bootstrap, "kcli-java-txn-2");
    second.initTransactions();
    String fenced = "none";
    try {
      transaction(first, topic, "zombie", 1, true);
    } catch (ProducerFencedException e) {
      fenced = "ProducerFencedException";
    } catch (Exception e) {
      Throwable c = e.getCause() != null ? e.getCause() : e;
      fenced = c.getClass().getSimpleName();
    }
    check(fenced.equals("ProducerFencedException"), "the first producer was not fenced: " + fenced);
    first.close(Duration.ofSeconds(5));
    transaction(second, topic, "c4", 1, true);

    // Offsets in transactions: committed with a commit, dropped with an abort, unstable while
    // their transaction is open.
    String group = "kcli-java-txn-group";
    ConsumerGroupMetadata groupMetadata = new ConsumerGroupMetadata(group);
    TopicPartition p1 = new TopicPartition(topic, 1);
    second.beginTransaction();
    second.sendOffsetsToTransaction(Map.of(p0, new OffsetAndMetadata(5)), groupMetadata);
    second.commitTransaction();
    second.beginTransaction();
    second.sendOffsetsToTransaction(Map.of(p0, new OffsetAndMetadata(9)), groupMetadata);
    second.abortTransaction();
    second.beginTransaction();
    second.sendOffsetsToTransaction(Map.of(p1, new OffsetAndMetadata(3)), groupMetadata);
    String unstable;
    try (KafkaConsumer<byte[], byte[]> gc = consumer(bootstrap, "read_committed", group)) {
      try {
        gc.committed(Set.of(p1), Duration.ofSeconds(3));
        unstable = "stable";
      } catch (TimeoutException e) {
        unstable = "TimeoutException";
      }
    }
    check(unstable.equals("TimeoutException"), "an open transaction's offset was read: " + unstable);
    second.commitTransaction();
    Map<TopicPartition, OffsetAndMetadata> groupOffsets;
    try (KafkaConsumer<byte[], byte[]> gc = consumer(bootstrap, "read_committed", group)) {
      groupOffsets = gc.committed(Set.of(p0, p1), Duration.ofSeconds(CALL_S));
    }
    check(
        groupOffsets.get(p0) != null && groupOffsets.get(p0).offset() == 5,
        "partition 0's offset after a commit and an abort: " + groupOffsets.get(p0));
    check(
        groupOffsets.get(p1) != null && groupOffsets.get(p1).offset() == 3,
        "partition 1's offset after its transaction committed: " + groupOffsets.get(p1));
    second.close(Duration.ofSeconds(10));

    Map<Integer, List<String>> committed;
    Map<Integer, List<String>> all;
    try (KafkaConsumer<byte[], byte[]> rc = consumer(bootstrap, "read_committed")) {
      committed = readAll(rc, topic);
    }
    try (KafkaConsumer<byte[], byte[]> ru = consumer(bootstrap, "read_uncommitted")) {
      all = readAll(ru, topic);
    }
    int committedCount = 0;
    int allCount = 0;
    for (int part = 0; part < PARTITIONS; part++) {
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < 4; i++) expected.add("c1-" + part + "-" + i);
      for (int i = 0; i < 2; i++) expected.add("c2-" + part + "-" + i);
      if (part == 0) expected.add("c3-0-0");
      expected.add("c4-" + part + "-0");
      check(
          committed.get(part).equals(expected),
          "read_committed partition " + part + ": " + committed.get(part) + " != " + expected);
      long aborted = all.get(part).stream().filter(v -> v.startsWith("a1-")).count();
      check(aborted == 3, "read_uncommitted partition " + part + " saw " + aborted + " aborted");
      check(
          all.get(part).stream().noneMatch(v -> v.startsWith("zombie")),
          "a fenced producer's record was written to partition " + part);
      committedCount += committed.get(part).size();
      allCount += all.get(part).size();
    }
    return "{\"ok\":true,\"committed\":"
        + committedCount
        + ",\"read_uncommitted\":"
        + allCount
        + ",\"open_lso\":"
        + openLso
        + ",\"open_hw\":"
        + openHw
        + ",\"unstable\":\""
        + unstable
        + "\",\"fenced\":\""
        + fenced
        + "\",\"txn_ms\":"
        + txnMs
        + "}";
  }
}
