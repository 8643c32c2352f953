// Produces records with Kafka's Java producer, the way Java applications
// write them (snappy in xerial snappy-java framing, Java's LZ4 frame
// writer, ...), so that the tests can read the broker's log segments with
// Thaw's decoder.
//
//   java -cp '.deps/kafka/lib/*' tests/integration/java/ProduceCodecs.java BOOTSTRAP TOPIC CODEC < records.jsonl
//
// Record lines: {"timestamp": MS, "key": BASE64|null, "value": BASE64|null,
// "headers": [[KEY, BASE64|null], ...]}; all go to partition 0, in order.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class ProduceCodecs {
  static byte[] bytes(JsonNode n) {
    return n == null || n.isNull() ? null : Base64.getDecoder().decode(n.asText());
  }

  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", args[0]);
    p.put("compression.type", args[2]);
    p.put("linger.ms", "200");
    p.put("batch.size", String.valueOf(4 << 20));
    p.put("max.request.size", String.valueOf(10 << 20));
    p.put("acks", "all");
    ObjectMapper mapper = new ObjectMapper();
    List<Future<RecordMetadata>> sent = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> producer =
             new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isEmpty()) continue;
        JsonNode j = mapper.readTree(line);
        ProducerRecord<byte[], byte[]> r =
            new ProducerRecord<>(args[1], 0, j.get("timestamp").asLong(), bytes(j.get("key")), bytes(j.get("value")));
        for (JsonNode h : j.get("headers")) r.headers().add(new RecordHeader(h.get(0).asText(), bytes(h.get(1))));
        sent.add(producer.send(r));
      }
      producer.flush();
      for (Future<RecordMetadata> f : sent) f.get();
    }
  }
}
