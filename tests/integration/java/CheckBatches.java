// Reads a file of Kafka record batches with Kafka's own Java classes
// (MemoryRecords, DefaultRecordBatch) and prints what a Java consumer sees,
// as JSON lines: one {"batch": ...} line per batch, then one line per record.
// Keys, values and header values are base64 (null stays null).
//
//   java -cp '.deps/kafka/lib/*' tests/integration/java/CheckBatches.java FILE
//
// Every batch goes through ensureValid() (magic, size, CRC-32C: what a Java
// consumer with check.crcs=true does) and both record iterators: the plain
// one and the streaming one consumers use for compressed batches.

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

public class CheckBatches {
  static String str(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  static String b64(ByteBuffer buf) {
    if (buf == null) return "null";
    byte[] a = new byte[buf.remaining()];
    buf.duplicate().get(a);
    return "\"" + Base64.getEncoder().encodeToString(a) + "\"";
  }

  static String b64(byte[] a) {
    return a == null ? "null" : "\"" + Base64.getEncoder().encodeToString(a) + "\"";
  }

  static String json(Record r, MutableRecordBatch batch) {
    StringBuilder h = new StringBuilder("[");
    Header[] headers = r.headers();
    for (int i = 0; i < headers.length; i++) {
      if (i > 0) h.append(',');
      h.append('[').append(str(headers[i].key())).append(',').append(b64(headers[i].value())).append(']');
    }
    h.append(']');
    return "{\"offset\":" + r.offset() + ",\"timestamp\":" + r.timestamp() + ",\"timestamp_type\":"
        + str(batch.timestampType().name) + ",\"key\":" + b64(r.key()) + ",\"value\":" + b64(r.value())
        + ",\"headers\":" + h + "}";
  }

  public static void main(String[] args) throws Exception {
    ByteBuffer buf = ByteBuffer.wrap(Files.readAllBytes(Paths.get(args[0])));
    MemoryRecords records = MemoryRecords.readableRecords(buf);
    int batches = 0;
    int bytes = 0;
    for (MutableRecordBatch batch : records.batches()) {
      batch.ensureValid();
      batches++;
      bytes += batch.sizeInBytes();
      System.out.println("{\"batch\":{\"base_offset\":" + batch.baseOffset() + ",\"last_offset\":" + batch.lastOffset()
          + ",\"magic\":" + batch.magic() + ",\"compression\":" + str(batch.compressionType().name)
          + ",\"timestamp_type\":" + str(batch.timestampType().name) + ",\"max_timestamp\":" + batch.maxTimestamp()
          + ",\"leader_epoch\":" + batch.partitionLeaderEpoch() + ",\"producer_id\":" + batch.producerId()
          + ",\"producer_epoch\":" + batch.producerEpoch() + ",\"base_sequence\":" + batch.baseSequence()
          + ",\"count\":" + batch.countOrNull() + ",\"checksum\":" + batch.checksum() + "}}");
      List<String> plain = new ArrayList<>();
      for (Record r : batch) {
        r.ensureValid();
        plain.add(json(r, batch));
      }
      List<String> streamed = new ArrayList<>();
      try (CloseableIterator<Record> it = batch.streamingIterator(BufferSupplier.create())) {
        while (it.hasNext()) streamed.add(json(it.next(), batch));
      }
      if (!plain.equals(streamed)) throw new IllegalStateException("iterators disagree in batch " + batches);
      if (batch.countOrNull() != null && batch.countOrNull() != plain.size())
        throw new IllegalStateException("count " + batch.countOrNull() + " but " + plain.size() + " records");
      for (String s : plain) System.out.println(s);
    }
    if (bytes != buf.limit())
      throw new IllegalStateException("batches cover " + bytes + " of " + buf.limit() + " bytes");
    System.out.println("{\"batches\":" + batches + "}");
  }
}
