// Writes the Avro binary encoding of datums given in Avro's JSON encoding,
// with Apache Avro's own Java implementation (GenericDatumReader over a
// JsonDecoder, GenericDatumWriter over a BinaryEncoder): one hex line per
// datum line. avro_value_test.cc checks that Thaw decodes these bytes and
// encodes the decoded row back to the very same bytes. Java 11+ single-file launch:
//   java -cp '.deps/java/lib/*' tests/unit/records/AvroVectors.java \
//     tests/unit/records/resources/avro_value_all_types.avsc \
//     tests/unit/records/resources/avro_value_datums.jsonl > tests/unit/records/resources/avro_value_java.hex
import java.io.ByteArrayOutputStream;
import java.nio.file.*;
import java.util.HexFormat;
import org.apache.avro.Schema;
import org.apache.avro.generic.*;
import org.apache.avro.io.*;

public class AvroVectors {
  public static void main(String[] args) throws Exception {
    Schema schema = new Schema.Parser().parse(Files.readString(Paths.get(args[0])));
    GenericDatumReader<Object> reader = new GenericDatumReader<>(schema);
    GenericDatumWriter<Object> writer = new GenericDatumWriter<>(schema);
    for (String line : Files.readAllLines(Paths.get(args[1]))) {
      if (line.isBlank()) continue;
      Object datum = reader.read(null, DecoderFactory.get().jsonDecoder(schema, line));
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      BinaryEncoder enc = EncoderFactory.get().binaryEncoder(out, null);
      writer.write(datum, enc);
      enc.flush();
      System.out.println(HexFormat.of().formatHex(out.toByteArray()));
    }
  }
}
