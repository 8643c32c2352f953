// Moves partition leaders on a test cluster, with the Kafka Admin API from the
// jars in .deps/kafka/lib. Run by scripts/kafka.sh (`move-leader`, and
// `leader-mover` for the tests), in the JDK's single-file source mode:
//
//   java -cp '.deps/kafka/lib/*' scripts/kafka-leaders.java BOOTSTRAP [TOPIC P[,P...] [TO]]
//
// With TOPIC and PARTITION it moves one leader and exits. Without them it
// reads commands from stdin, one per line, and answers each with one line,
// so a test can move many leaders without a JVM start per move:
//
//   move TOPIC P[,P...] [TO]   ->  ok TOPIC MILLIS P:OLD>NEW ...     | error MESSAGE
//   leaders TOPIC              ->  ok P=LEADER P=LEADER ...          | error MESSAGE
//
// A move puts TO (default: the next in-sync replica after the current leader)
// first in each partition's replica list (a reassignment that only reorders
// replicas, so no data moves), runs a preferred leader election, and waits
// until the metadata shows the new leaders (all partitions at once).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.ElectionNotNeededException;

public class KafkaLeaders {
  static Admin admin;

  static String leaders(String topic) throws Exception {
    TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
    Map<Integer, Integer> m = new TreeMap<>();
    for (TopicPartitionInfo p : d.partitions()) m.put(p.partition(), p.leader() == null ? -1 : p.leader().id());
    StringBuilder sb = new StringBuilder("ok");
    m.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
    return sb.toString();
  }

  // Moves the leaders of `partitions` of `topic` at once (one reassignment,
  // one election, one wait); `to` null: each to its next in-sync replica.
  static String move(String topic, List<Integer> partitions, Integer to) throws Exception {
    long t0 = System.nanoTime();
    TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
    Map<Integer, TopicPartitionInfo> infos = new TreeMap<>();
    for (TopicPartitionInfo p : d.partitions()) infos.put(p.partition(), p);
    Map<TopicPartition, Optional<NewPartitionReassignment>> reassign = new java.util.HashMap<>();
    Map<Integer, int[]> moves = new TreeMap<>();  // partition -> {old, new}
    for (int partition : partitions) {
      TopicPartitionInfo info = infos.get(partition);
      if (info == null) return "error topic " + topic + " has no partition " + partition;
      TopicPartition tp = new TopicPartition(topic, partition);
      int old = info.leader() == null ? -1 : info.leader().id();
      List<Integer> isr = new ArrayList<>();
      for (Node n : info.isr()) isr.add(n.id());
      List<Integer> replicas = new ArrayList<>();
      for (Node n : info.replicas()) replicas.add(n.id());
      int target;
      if (to != null) {
        target = to;
        if (!isr.contains(target)) return "error broker " + target + " is not in the ISR " + isr + " of " + tp;
      } else {
        List<Integer> ring = new ArrayList<>(replicas);
        ring.removeIf(r -> !isr.contains(r));
        if (ring.size() < 2) return "error " + tp + " has no other in-sync replica (ISR " + isr + ")";
        target = ring.get((ring.indexOf(old) + 1) % ring.size());
      }
      moves.put(partition, new int[] {old, target});
      if (target == old) continue;
      List<Integer> order = new ArrayList<>();
      order.add(target);
      for (int r : replicas) if (r != target) order.add(r);
      reassign.put(tp, Optional.of(new NewPartitionReassignment(order)));
    }
    if (!reassign.isEmpty()) {
      admin.alterPartitionReassignments(reassign).all().get();
      Map<TopicPartition, Optional<Throwable>> res =
          admin.electLeaders(ElectionType.PREFERRED, reassign.keySet()).partitions().get();
      for (Map.Entry<TopicPartition, Optional<Throwable>> e : res.entrySet()) {
        if (e.getValue().isPresent() && !(e.getValue().get() instanceof ElectionNotNeededException)) {
          return "error preferred election for " + e.getKey() + " failed: " + e.getValue().get();
        }
      }
      long deadline = System.nanoTime() + 15_000_000_000L;
      while (true) {
        TopicDescription now = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        boolean done = true;
        for (TopicPartitionInfo p : now.partitions()) {
          int[] m = moves.get(p.partition());
          if (m != null && (p.leader() == null || p.leader().id() != m[1])) done = false;
        }
        if (done) break;
        if (System.nanoTime() > deadline) return "error leaders of " + topic + " not moved 15 s after the election";
        Thread.sleep(20);
      }
    }
    StringBuilder sb = new StringBuilder("ok ").append(topic).append(' ').append((System.nanoTime() - t0) / 1_000_000);
    moves.forEach((p, m) -> sb.append(' ').append(p).append(':').append(m[0]).append('>').append(m[1]));
    return sb.toString();
  }

  static String run(String[] w) {
    try {
      if (w.length >= 3 && w[0].equals("move")) {
        List<Integer> parts = new ArrayList<>();
        for (String x : w[2].split(",")) parts.add(Integer.parseInt(x));
        return move(w[1], parts, w.length > 3 ? Integer.valueOf(w[3]) : null);
      }
      if (w.length == 2 && w[0].equals("leaders")) return leaders(w[1]);
      return "error unknown command: " + String.join(" ", w);
    } catch (Exception e) {
      Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
      return ("error " + c).replace('\n', ' ');
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: kafka-leaders.java BOOTSTRAP [TOPIC PARTITION [TO]]");
      System.exit(2);
    }
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    admin = Admin.create(p);
    try {
      if (args.length >= 3) {
        String[] cmd = args.length > 3 ? new String[] {"move", args[1], args[2], args[3]}
                                       : new String[] {"move", args[1], args[2]};
        String r = run(cmd);
        System.out.println(r);
        System.exit(r.startsWith("ok") ? 0 : 1);
      }
      System.out.println("ready");
      System.out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
      for (String line; (line = in.readLine()) != null;) {
        line = line.trim();
        if (line.isEmpty()) continue;
        System.out.println(run(line.split("\\s+")));
        System.out.flush();
      }
    } finally {
      admin.close();
    }
  }
}
