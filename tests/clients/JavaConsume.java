// The Apache Kafka Java client (the 4.x jars of .deps/kafka/lib) as a consumer
// driver; prints each record as one JSON line in the format of jsonl.py.
//
//   java -cp '.deps/kafka/lib/*' tests/clients/JavaConsume.java --bootstrap HOST:PORT --topic T [--topic T2]
//       [--mode assign|subscribe|group3] [--group G] [--assignor range|roundrobin|cooperative-sticky]
//       [--start beginning|offset:N|time:MS] [--count N] [--follow] [--leave-after N] [--timeout S]
//
// assign:    assign() every partition, then seekToBeginning / seek / offsetsForTimes.
// subscribe: one group member (commitSync after every poll).
// group3:    three members of group G in three threads (one KafkaConsumer each);
//            member 2 reads --leave-after records (default 5), commits them and
//            close()s (LeaveGroup); members 0 and 1 go on until every partition
//            is read to its end. Each record line carries "member": i; stderr gets
//            {"member": i, "assigned": [[topic, partition], ...]} on every
//            assignment and {"member": 2, "left": true} when it leaves. Records
//            read by member 2 but not committed before it left are read again by
//            another member (at-least-once): the same offset may appear twice.
// Stops when every partition reached the end offset it had at the start
// (endOffsets), or after --count records (--follow: only then). Exit 1 on an error.
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class JavaConsume {
  static String bootstrap, group, assignor = "range", start = "beginning", mode = "assign";
  static List<String> topics = new ArrayList<>();
  static long count = -1, leaveAfter = 5;
  static boolean follow = false;
  static double timeout = 120;
  static final Object out = new Object();
  static final AtomicLong emitted = new AtomicLong();

  static String q(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"': b.append("\\\""); break;
        case '\\': b.append("\\\\"); break;
        default:
          if (c < 0x20) b.append(String.format("\\u%04x", (int) c)); else b.append(c);
      }
    }
    return b.append('"').toString();
  }
  static String b64(byte[] v) { return v == null ? "null" : q(Base64.getEncoder().encodeToString(v)); }

  static void emit(ConsumerRecord<byte[], byte[]> r, int member) {
    StringBuilder b = new StringBuilder();
    b.append("{\"topic\":").append(q(r.topic())).append(",\"partition\":").append(r.partition())
     .append(",\"offset\":").append(r.offset());
    boolean known = r.timestampType() != TimestampType.NO_TIMESTAMP_TYPE;
    b.append(",\"timestamp\":").append(known ? Long.toString(r.timestamp()) : "null");
    b.append(",\"timestamp_type\":").append(known ? q(r.timestampType().name) : "null");
    b.append(",\"key\":").append(b64(r.key())).append(",\"value\":").append(b64(r.value()));
    b.append(",\"headers\":[");
    boolean first = true;
    for (Header h : r.headers()) {
      if (!first) b.append(',');
      first = false;
      b.append('[').append(q(h.key())).append(',').append(b64(h.value())).append(']');
    }
    b.append(']');
    if (member >= 0) b.append(",\"member\":").append(member);
    b.append('}');
    synchronized (out) { System.out.println(b); System.out.flush(); }
    emitted.incrementAndGet();
  }
  static void err(String s) { synchronized (out) { System.err.println(s); System.err.flush(); } }

  static Properties props(String groupId) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.CHECK_CRCS_CONFIG, "true");
    p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(10 << 20));
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    String cls;
    switch (assignor) {
      case "range": cls = RangeAssignor.class.getName(); break;
      case "roundrobin": cls = RoundRobinAssignor.class.getName(); break;
      case "cooperative-sticky": cls = CooperativeStickyAssignor.class.getName(); break;
      default: throw new IllegalArgumentException("unknown assignor " + assignor);
    }
    p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, cls);
    // Short enough that a rebalance after the leave is quick.
    p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
    p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
    return p;
  }

  public static void main(String[] argv) throws Exception {
    for (int i = 0; i < argv.length; i += 2) {
      if (argv[i].equals("--follow")) {
        follow = true;
        i -= 1;
        continue;
      }
      String k = argv[i], v = argv[i + 1];
      switch (k) {
        case "--bootstrap": bootstrap = v; break;
        case "--topic": topics.add(v); break;
        case "--mode": mode = v; break;
        case "--group": group = v; break;
        case "--assignor": assignor = v; break;
        case "--start": start = v; break;
        case "--count": count = Long.parseLong(v); break;
        case "--leave-after": leaveAfter = Long.parseLong(v); break;
        case "--timeout": timeout = Double.parseDouble(v); break;
        default: throw new IllegalArgumentException("unknown argument " + k);
      }
    }
    if (group == null) group = "thaw-java-" + UUID.randomUUID().toString().substring(0, 8);
    final long deadline = System.nanoTime() + (long) (timeout * 1e9);
    // End offsets at start.
    Map<TopicPartition, Long> ends;
    List<TopicPartition> all = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props(group + "-probe"))) {
      for (String t : topics) {
        List<PartitionInfo> ps = c.partitionsFor(t, Duration.ofSeconds(30));
        if (ps == null || ps.isEmpty()) throw new IllegalStateException("topic " + t + ": no partitions");
        for (PartitionInfo pi : ps) all.add(new TopicPartition(t, pi.partition()));
      }
      ends = c.endOffsets(all, Duration.ofSeconds(30));
    }
    // done[tp]: highest offset + 1 read (by anyone) >= end
    final ConcurrentHashMap<TopicPartition, Long> reached = new ConcurrentHashMap<>();
    final Map<TopicPartition, Long> endsF = ends;
    java.util.function.BooleanSupplier allDone = () -> {
      if (count >= 0 && emitted.get() >= count) return true;
      if (follow) return false;
      for (TopicPartition tp : all) {
        if (reached.getOrDefault(tp, 0L) < endsF.get(tp)) return false;
      }
      return true;
    };

    if (mode.equals("assign")) {
      try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props(group))) {
        c.assign(all);
        if (start.equals("beginning")) {
          c.seekToBeginning(all);
        } else if (start.startsWith("offset:")) {
          long o = Long.parseLong(start.substring(7));
          for (TopicPartition tp : all) c.seek(tp, o);
        } else if (start.startsWith("time:")) {
          long ms = Long.parseLong(start.substring(5));
          Map<TopicPartition, Long> q = new HashMap<>();
          for (TopicPartition tp : all) q.put(tp, ms);
          Map<TopicPartition, OffsetAndTimestamp> f = c.offsetsForTimes(q, Duration.ofSeconds(30));
          for (TopicPartition tp : all) {
            OffsetAndTimestamp ot = f.get(tp);
            if (ot == null) c.seekToEnd(List.of(tp)); else c.seek(tp, ot.offset());
          }
        } else throw new IllegalArgumentException("bad --start " + start);
        for (TopicPartition tp : all) reached.put(tp, c.position(tp, Duration.ofSeconds(30)));
        while (!allDone.getAsBoolean()) {
          if (System.nanoTime() > deadline) fail("timeout: " + emitted.get() + " records; reached " + reached + " ends " + ends);
          for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
            if (count >= 0 && emitted.get() >= count) break;
            emit(r, -1);
          }
          for (TopicPartition tp : all) reached.put(tp, c.position(tp));
        }
      }
      return;
    }

    int members = mode.equals("group3") ? 3 : 1;
    if (!mode.equals("group3") && !mode.equals("subscribe")) throw new IllegalArgumentException("bad --mode " + mode);
    ExecutorService pool = Executors.newFixedThreadPool(members);
    List<Future<?>> fs = new ArrayList<>();
    final AtomicReference<Throwable> error = new AtomicReference<>();
    for (int m = 0; m < members; m++) {
      final int member = m;
      final boolean leaver = mode.equals("group3") && m == 2;
      fs.add(pool.submit(() -> {
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props(group))) {
          c.subscribe(topics, new ConsumerRebalanceListener() {
            public void onPartitionsRevoked(Collection<TopicPartition> ps) {}
            public void onPartitionsAssigned(Collection<TopicPartition> ps) {
              StringBuilder b = new StringBuilder("{\"member\":" + member + ",\"assigned\":[");
              boolean first = true;
              for (TopicPartition tp : ps) {
                if (!first) b.append(',');
                first = false;
                b.append('[').append(q(tp.topic())).append(',').append(tp.partition()).append(']');
              }
              err(b.append("]}").toString());
            }
          });
          long mine = 0;
          while (!allDone.getAsBoolean() && error.get() == null) {
            if (System.nanoTime() > deadline) throw new TimeoutException("member " + member + ": timeout; reached " + reached + " ends " + endsF);
            ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(200));
            Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> r : rs) {
              if (leaver && mine >= leaveAfter) break;
              emit(r, mode.equals("group3") ? member : -1);
              mine++;
              TopicPartition tp = new TopicPartition(r.topic(), r.partition());
              commit.put(tp, new OffsetAndMetadata(r.offset() + 1, r.leaderEpoch(), ""));  // as commitSync() does: with the epoch
              reached.merge(tp, r.offset() + 1, Math::max);
            }
            // The position is past every record of the poll: only when all were printed.
            if (!(leaver && mine >= leaveAfter)) {
              for (TopicPartition tp : c.assignment()) reached.merge(tp, c.position(tp), Math::max);
            }
            if (!commit.isEmpty()) c.commitSync(commit);
            if (leaver && mine >= leaveAfter) {
              err("{\"member\":" + member + ",\"left\":true,\"read\":" + mine + "}");
              break;  // close(): LeaveGroup
            }
          }
        } catch (Throwable t) {
          error.compareAndSet(null, t);
        }
      }));
    }
    for (Future<?> f : fs) f.get();
    pool.shutdown();
    if (error.get() != null) fail(error.get().toString());
  }

  static void fail(String s) { err("JavaConsume: " + s); System.exit(1); }
}
