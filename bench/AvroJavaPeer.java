// The peer of bench/avro_value_bench.cc: Apache Avro's Java implementation
// decoding the same datums (tests/unit/records/resources/avro_value_java.hex,
// the all-types schema) with GenericDatumReader over a reused BinaryDecoder,
// and encoding the decoded records back with GenericDatumWriter over a
// reused BinaryEncoder. JIT warm-up rounds first; prints one JSON line with
// the best round's values/s. Java 11+ single-file launch, run by
// bench/avro_peer_bench.sh:
//   java -cp '.deps/java/lib/*' bench/AvroJavaPeer.java N ROUNDS
import java.io.ByteArrayOutputStream;
import java.nio.file.*;
import java.util.*;
import org.apache.avro.Schema;
import org.apache.avro.generic.*;
import org.apache.avro.io.*;

public class AvroJavaPeer {
  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 50000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    Schema schema = new Schema.Parser().parse(
        Files.readString(Paths.get("tests/unit/records/resources/avro_value_all_types.avsc")));
    List<byte[]> datums = new ArrayList<>();
    for (String line : Files.readAllLines(Paths.get("tests/unit/records/resources/avro_value_java.hex"))) {
      if (!line.isBlank()) datums.add(HexFormat.of().parseHex(line.trim()));
    }
    long bytes = 0;
    for (int i = 0; i < n; ++i) bytes += datums.get(i % datums.size()).length;
    GenericDatumReader<Object> reader = new GenericDatumReader<>(schema);
    GenericDatumWriter<Object> writer = new GenericDatumWriter<>(schema);
    double bestDecode = 1e9, bestEncode = 1e9;
    BinaryDecoder dec = null;
    BinaryEncoder enc = null;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    long check = 0;
    for (int r = 0; r < rounds + 3; ++r) {  // 3 warm-up rounds for the JIT
      Object[] decoded = new Object[n];
      long t0 = System.nanoTime();
      for (int i = 0; i < n; ++i) {
        dec = DecoderFactory.get().binaryDecoder(datums.get(i % datums.size()), dec);
        decoded[i] = reader.read(null, dec);
      }
      long t1 = System.nanoTime();
      for (int i = 0; i < n; ++i) {
        out.reset();
        enc = EncoderFactory.get().binaryEncoder(out, enc);
        writer.write(decoded[i], enc);
        enc.flush();
        check += out.size();
      }
      long t2 = System.nanoTime();
      if (r >= 3) {
        bestDecode = Math.min(bestDecode, (t1 - t0) / 1e9);
        bestEncode = Math.min(bestEncode, (t2 - t1) / 1e9);
      }
    }
    if (check != bytes * (rounds + 3)) throw new IllegalStateException("re-encoded sizes differ: " + check);
    System.out.printf("{\"values\": %d, \"bytes\": %d, \"decode_values_per_s\": %.0f, \"decode_mb_per_s\": %.1f, "
        + "\"encode_values_per_s\": %.0f, \"encode_mb_per_s\": %.1f}%n",
        n, bytes, n / bestDecode, bytes / bestDecode / 1e6, n / bestEncode, bytes / bestEncode / 1e6);
  }
}
