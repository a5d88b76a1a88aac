// Kafka Streams 3.9.1 with processing.guarantee=exactly_once_v2, and the reader that checks what
// it wrote. Two modes:
//
// StreamsEosCheck run BOOTSTRAP APP_ID INPUT OUTPUT STATE_DIR
//   Runs one instance of the application until it is killed (or DEADLINE_S passes). Each input
//   record (KEY, SEQ), the SEQth record of KEY, adds one to KEY's count in a persistent (RocksDB)
//   store, and the record (KEY, "SEQ:COUNT") goes to OUTPUT. Consumed offsets, the store's
//   changelog and the output are committed in one transaction every 100 ms, so each input record
//   is counted once and written once however instances and brokers die: COUNT equals SEQ in every
//   committed output record. Internal topics get 3 replicas; the state dir, which holds the
//   instance's process id (and so its transactional id, APP_ID-PROCESS_ID-1) across restarts, is
//   STATE_DIR. State changes go to stderr, with the time; an uncaught exception halts with 1,
//   for an instance must survive a broker's death.
//
// StreamsEosCheck read BOOTSTRAP TOPIC...
//   Waits until no transaction is open on any partition of each TOPIC (its read_committed end
//   offset is its high watermark), then reads it from the start to that end with read_committed
//   and with read_uncommitted. Prints {"ok":true,"topics":{TOPIC:{"read_committed":N,
//   "read_uncommitted":M,"values":{KEY:[VALUE,...],...}},...}}: the record counts of each
//   isolation level, and the values read_committed reads for each key, in offset order.
//
// Prints one JSON line on stdout and exits 0 (read), or prints one line starting with "FAIL:" on
// stderr and exits 1 (2 on a usage error, 3 when the overall deadline passes).

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

public class StreamsEosCheck {
  /** An instance outlives no test: a test that died without killing it is not waited for. */
  static final int RUN_DEADLINE_S = 300;
  static final int READ_DEADLINE_S = 90;
  static final String STORE = "counts";

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

  static void usage() {
    System.err.println(
        "usage: StreamsEosCheck run BOOTSTRAP APP_ID INPUT OUTPUT STATE_DIR\n"
            + "       StreamsEosCheck read BOOTSTRAP TOPIC...");
    Runtime.getRuntime().halt(2);
  }

  public static void main(String[] args) {
    if (args.length < 1) usage();
    boolean run = args[0].equals("run");
    if (run ? args.length != 6 : !args[0].equals("read") || args.length < 3) usage();
    int deadline = run ? RUN_DEADLINE_S : READ_DEADLINE_S;
    Thread watchdog =
        new Thread(
            () -> {
              try {
                Thread.sleep(deadline * 1000L);
              } catch (InterruptedException e) {
                return;
              }
              die(3, "FAIL: StreamsEosCheck: overall deadline of " + deadline + "s passed");
            });
    watchdog.setDaemon(true);
    watchdog.start();
    try {
      if (run) {
        run(args[1], args[2], args[3], args[4], args[5]);
        // The instance runs until it is killed; its stream thread is not a daemon.
        return;
      }
      List<String> topics = List.of(args).subList(2, args.length);
      System.out.println(read(args[1], topics));
      System.out.flush();
      Runtime.getRuntime().halt(0);
    } catch (CheckFailed e) {
      die(1, "FAIL: StreamsEosCheck: " + e.getMessage());
    } catch (Throwable e) {
      die(1, "FAIL: StreamsEosCheck: " + e.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  /** Counts each key's records and writes "SEQ:COUNT" for each. */
  static final class Count implements Processor<String, String, String, String> {
    private ProcessorContext<String, String> context;
    private KeyValueStore<String, Long> counts;

    @Override
    public void init(ProcessorContext<String, String> context) {
      this.context = context;
      this.counts = context.getStateStore(STORE);
    }

    @Override
    public void process(Record<String, String> record) {
      Long before = counts.get(record.key());
      long count = (before == null ? 0 : before) + 1;
      counts.put(record.key(), count);
      context.forward(record.withValue(record.value() + ":" + count));
    }
  }

  static void run(String bootstrap, String appId, String input, String output, String stateDir) {
    StreamsBuilder builder = new StreamsBuilder();
    builder.addStateStore(
        Stores.keyValueStoreBuilder(
            Stores.persistentKeyValueStore(STORE), Serdes.String(), Serdes.Long()));
    builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
        .process(Count::new, STORE)
        .to(output, Produced.with(Serdes.String(), Serdes.String()));

    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
    p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 3);
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    // A dead instance's partitions move to the other after 6 s (the brokers' minimum), not 45.
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1000);
    // Each output record is sent as it is made, rather than all at the commit, so that most of
    // the time an open transaction has records in the output's logs (what a kill leaves behind
    // to be aborted).
    p.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 0);

    KafkaStreams streams = new KafkaStreams(builder.build(), p);
    streams.setStateListener(
        (now, before) -> {
          System.err.println(Instant.now() + " state " + before + " -> " + now);
          System.err.flush();
        });
    streams.setUncaughtExceptionHandler(
        e -> {
          e.printStackTrace();
          die(1, "FAIL: StreamsEosCheck: uncaught " + e);
          return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
    streams.start();
  }

  static KafkaConsumer<String, String> consumer(String bootstrap, String isolation) {
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.put(ConsumerConfig.CLIENT_ID_CONFIG, "kcli-streams-check-" + isolation);
    c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    return new KafkaConsumer<>(c);
  }

  /** Every record below `end`, from the start: (key, value) pairs in offset order per partition. */
  static List<String[]> readTo(
      KafkaConsumer<String, String> c, Map<TopicPartition, Long> end, long until) {
    List<TopicPartition> tps = new ArrayList<>(end.keySet());
    c.assign(tps);
    c.seekToBeginning(tps);
    List<String[]> out = new ArrayList<>();
    while (true) {
      boolean done = true;
      for (TopicPartition tp : tps) done &= c.position(tp) >= end.get(tp);
      if (done) return out;
      check(System.nanoTime() < until, "reading to " + end + " took too long");
      for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
        out.add(new String[] {r.key(), r.value()});
      }
    }
  }

  static String read(String bootstrap, List<String> topics) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(READ_DEADLINE_S - 10);
    StringBuilder json = new StringBuilder("{\"ok\":true,\"topics\":{");
    boolean firstTopic = true;
    try (KafkaConsumer<String, String> rc = consumer(bootstrap, "read_committed");
        KafkaConsumer<String, String> ru = consumer(bootstrap, "read_uncommitted")) {
      for (String topic : topics) {
        List<TopicPartition> tps = new ArrayList<>();
        for (PartitionInfo info : rc.partitionsFor(topic)) {
          tps.add(new TopicPartition(topic, info.partition()));
        }
        // An open transaction (a zombie's, aborted once its transactional id is fenced or its
        // timeout passes) holds the read_committed end back; nothing written after it is
        // readable until then.
        Map<TopicPartition, Long> end;
        while (true) {
          end = ru.endOffsets(tps);
          if (rc.endOffsets(tps).equals(end)) break;
          check(System.nanoTime() < until, topic + ": transactions still open: " + end);
          Thread.sleep(100);
        }
        List<String[]> committed = readTo(rc, end, until);
        int uncommitted = readTo(ru, end, until).size();
        Map<String, List<String>> values = new TreeMap<>();
        for (String[] kv : committed) {
          values.computeIfAbsent(kv[0], k -> new ArrayList<>()).add(kv[1]);
        }
        if (!firstTopic) json.append(',');
        firstTopic = false;
        json.append(quote(topic)).append(":{\"read_committed\":").append(committed.size());
        json.append(",\"read_uncommitted\":").append(uncommitted).append(",\"values\":{");
        boolean first = true;
        for (Map.Entry<String, List<String>> e : values.entrySet()) {
          if (!first) json.append(',');
          first = false;
          json.append(quote(e.getKey())).append(":[");
          for (int i = 0; i < e.getValue().size(); i++) {
            if (i > 0) json.append(',');
            json.append(quote(e.getValue().get(i)));
          }
          json.append(']');
        }
        json.append("}}");
      }
    }
    return json.append("}}").toString();
  }

  /** A JSON string of `s`, which the test's keys and values keep to printable ASCII. */
  static String quote(String s) {
    check(s != null, "a null key or value");
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
