// Drives a Kafka broker's group coordinator and idempotent producer with the real Java client
// (kafka-clients 3.9.1), all with the clients' default settings, and checks what comes back.
//
//   javac -cp '.tools/kafka-3.9.1/*' -d "$tmp" tests/clients/java/GroupCheck.java
//   java -cp "$tmp:.tools/kafka-3.9.1/*" GroupCheck 127.0.0.1:9092 some-topic some-group
//
// 1. AdminClient createTopics (4 partitions); a KafkaProducer with DEFAULT settings (so
//    idempotent: InitProducerId first, acks=all) sends 200 records.
// 2. A KafkaConsumer in the group subscribes, reads all 200, commitSync, close (a clean leave);
//    committed offsets = end offsets.
// 3. 100 more; a new member resumes from the committed offsets and reads exactly those 100.
// 4. Two members in their own threads: once both hold partitions (together all four), 100 more
//    are produced; each record comes once, from its reader's assignment.
// 5. AdminClient: listConsumerGroups, describeConsumerGroups (EMPTY, no members),
//    listConsumerGroupOffsets, deleteConsumerGroupOffsets (partition 0), deleteConsumerGroups.
//
// Prints one JSON line on stdout and exits 0 when everything matches; otherwise prints one line
// starting with "FAIL:" on stderr and exits 1 (2 on a usage error, 3 when the overall deadline
// passes).

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ConsumerGroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class GroupCheck {
  static final int DEADLINE_S = 120;
  static final long CALL_S = 30;
  static final int PARTITIONS = 4;
  static final int FIRST = 200;
  static final int MORE = 100;

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
    if (args.length != 3) {
      System.err.println("usage: GroupCheck BOOTSTRAP TOPIC GROUP");
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
              die(3, "FAIL: GroupCheck: overall deadline of " + DEADLINE_S + "s passed");
            });
    watchdog.setDaemon(true);
    watchdog.start();
    try {
      System.out.println(new GroupCheck(args[0], args[1], args[2]).run());
      System.out.flush();
      Runtime.getRuntime().halt(0);
    } catch (CheckFailed e) {
      die(1, "FAIL: GroupCheck: " + e.getMessage());
    } catch (ExecutionException e) {
      Throwable c = e.getCause() != null ? e.getCause() : e;
      die(1, "FAIL: GroupCheck: " + c.getClass().getSimpleName() + ": " + c.getMessage());
    } catch (Throwable e) {
      die(1, "FAIL: GroupCheck: " + e.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  final String bootstrap;
  final String topic;
  final String group;

  GroupCheck(String bootstrap, String topic, String group) {
    this.bootstrap = bootstrap;
    this.topic = topic;
    this.group = group;
  }

  KafkaConsumer<String, String> consumer() {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    KafkaConsumer<String, String> c = new KafkaConsumer<>(p);
    c.subscribe(Collections.singletonList(topic));
    return c;
  }

  void produce(KafkaProducer<String, String> producer, int start, int count) throws Exception {
    List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
    for (int i = start; i < start + count; i++) {
      sent.add(producer.send(new ProducerRecord<>(topic, i % PARTITIONS, "k" + i, "v" + i)));
    }
    for (java.util.concurrent.Future<?> f : sent) f.get(CALL_S, TimeUnit.SECONDS);
  }

  /** Polls until `want` records are in `seen` (partition/offset → value); no duplicates. */
  static void readUntil(KafkaConsumer<String, String> c, int want, Map<String, String> seen) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
    while (seen.size() < want) {
      check(System.nanoTime() < deadline, "read " + seen.size() + " of " + want + " records");
      for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
        String id = r.partition() + "/" + r.offset();
        check(seen.put(id, r.value()) == null, "record " + id + " delivered twice");
      }
    }
  }

  static Set<String> values(int from, int to) {
    Set<String> out = new TreeSet<>();
    for (int i = from; i < to; i++) out.add("v" + i);
    return out;
  }

  Map<Integer, Long> committed(AdminClient admin) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> offsets =
        admin
            .listConsumerGroupOffsets(group)
            .partitionsToOffsetAndMetadata()
            .get(CALL_S, TimeUnit.SECONDS);
    Map<Integer, Long> out = new TreeMap<>();
    offsets.forEach((tp, om) -> out.put(tp.partition(), om.offset()));
    return out;
  }

  Map<Integer, Long> endOffsets(KafkaConsumer<String, String> probe) {
    List<TopicPartition> tps = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) tps.add(new TopicPartition(topic, p));
    Map<Integer, Long> out = new TreeMap<>();
    probe.endOffsets(tps).forEach((tp, o) -> out.put(tp.partition(), o));
    return out;
  }

  String run() throws Exception {
    Properties ap = new Properties();
    ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    Properties pp = new Properties();
    pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    try (AdminClient admin = AdminClient.create(ap);
        KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
      admin
          .createTopics(Collections.singletonList(new NewTopic(topic, PARTITIONS, (short) 1)))
          .all()
          .get(CALL_S, TimeUnit.SECONDS);

      // 1-2. One member reads everything and leaves cleanly.
      produce(producer, 0, FIRST);
      Map<String, String> seen = new HashMap<>();
      Map<Integer, Long> ends;
      try (KafkaConsumer<String, String> c = consumer()) {
        readUntil(c, FIRST, seen);
        c.commitSync(Duration.ofSeconds(CALL_S));
        ends = endOffsets(c);
      }
      check(new TreeSet<>(seen.values()).equals(values(0, FIRST)), "first read differs");
      Map<Integer, Long> committed = committed(admin);
      check(committed.equals(ends), "committed " + committed + " != end offsets " + ends);

      // 3. A new member resumes from the committed offsets.
      produce(producer, FIRST, MORE);
      seen.clear();
      try (KafkaConsumer<String, String> c = consumer()) {
        readUntil(c, MORE, seen);
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofSeconds(1))) {
          seen.put(r.partition() + "/" + r.offset(), r.value());
        }
        c.commitSync(Duration.ofSeconds(CALL_S));
      }
      check(
          new TreeSet<>(seen.values()).equals(values(FIRST, FIRST + MORE)),
          "the resumed member read " + seen.size() + " records, not exactly the new " + MORE);

      // 4. Two members share the partitions.
      Map<String, String> shared = new ConcurrentHashMap<>();
      Map<String, Set<Integer>> assignments = new ConcurrentHashMap<>();
      AtomicReference<String> failure = new AtomicReference<>();
      List<Thread> members = new ArrayList<>();
      for (String name : new String[] {"a", "b"}) {
        Thread t =
            new Thread(
                () -> {
                  try (KafkaConsumer<String, String> c = consumer()) {
                    while (shared.size() < MORE && failure.get() == null) {
                      for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                        String id = r.partition() + "/" + r.offset();
                        if (shared.put(id, r.value()) != null) {
                          failure.compareAndSet(null, "record " + id + " delivered twice");
                        }
                        if (!assignments.getOrDefault(name, Set.of()).contains(r.partition())) {
                          failure.compareAndSet(
                              null, name + " read partition " + r.partition() + " outside its assignment");
                        }
                      }
                      Set<Integer> mine = new TreeSet<>();
                      c.assignment().forEach(tp -> mine.add(tp.partition()));
                      assignments.put(name, mine);
                    }
                    c.commitSync(Duration.ofSeconds(CALL_S));
                  } catch (Throwable e) {
                    failure.compareAndSet(null, name + ": " + e);
                  }
                });
        t.setDaemon(true);
        t.start();
        members.add(t);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
      while (true) {
        Set<Integer> a = assignments.getOrDefault("a", Set.of());
        Set<Integer> b = assignments.getOrDefault("b", Set.of());
        Set<Integer> all = new TreeSet<>(a);
        all.addAll(b);
        if (!a.isEmpty() && !b.isEmpty() && all.size() == PARTITIONS && a.size() + b.size() == PARTITIONS) break;
        check(failure.get() == null, String.valueOf(failure.get()));
        check(System.nanoTime() < deadline, "the members never shared the partitions: " + assignments);
        Thread.sleep(100);
      }
      produce(producer, FIRST + MORE, MORE);
      for (Thread t : members) t.join(TimeUnit.SECONDS.toMillis(40));
      check(failure.get() == null, String.valueOf(failure.get()));
      check(
          new TreeSet<>(shared.values()).equals(values(FIRST + MORE, FIRST + 2 * MORE)),
          "the two members read " + shared.size() + " records");

      // 5. The admin's view of the group.
      boolean listed = false;
      for (ConsumerGroupListing g : admin.listConsumerGroups().all().get(CALL_S, TimeUnit.SECONDS)) {
        listed |= g.groupId().equals(group);
      }
      check(listed, "listConsumerGroups lacks " + group);
      ConsumerGroupDescription d =
          admin
              .describeConsumerGroups(Collections.singletonList(group))
              .describedGroups()
              .get(group)
              .get(CALL_S, TimeUnit.SECONDS);
      check(
          d.state() == ConsumerGroupState.EMPTY && d.members().isEmpty(),
          "describeConsumerGroups: " + d);
      committed = committed(admin);
      check(committed.size() == PARTITIONS, "committed offsets " + committed);
      admin
          .deleteConsumerGroupOffsets(group, Set.of(new TopicPartition(topic, 0)))
          .all()
          .get(CALL_S, TimeUnit.SECONDS);
      Map<Integer, Long> afterDelete = committed(admin);
      check(
          !afterDelete.containsKey(0) && afterDelete.size() == PARTITIONS - 1,
          "after deleteConsumerGroupOffsets: " + afterDelete);
      admin.deleteConsumerGroups(Collections.singletonList(group)).all().get(CALL_S, TimeUnit.SECONDS);
      for (ConsumerGroupListing g : admin.listConsumerGroups().all().get(CALL_S, TimeUnit.SECONDS)) {
        check(!g.groupId().equals(group), "the deleted group is still listed");
      }
      return "{\"ok\":true,\"consumed\":" + (FIRST + 2 * MORE) + ",\"assignments\":\"" + assignments + "\"}";
    }
  }
}
