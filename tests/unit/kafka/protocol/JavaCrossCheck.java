// Decodes every line "<Name> <version> <seed> <hex>" of a vectors file (see
// java_vectors_test.cc) with Kafka's own generated Java message classes
// (org.apache.kafka.common.message.<Name>Data) and re-encodes it; prints each
// message whose Java re-encoding differs or which Java cannot read, then
// "ok N bad M"; exits 1 unless M is 0. Java 11+ single-file launch:
//   java -cp '.deps/kafka/lib/*' tests/unit/kafka/protocol/JavaCrossCheck.java VECTORS
import java.nio.ByteBuffer;
import java.nio.file.*;
import java.util.*;
import org.apache.kafka.common.protocol.*;

public class JavaCrossCheck {
  public static void main(String[] args) throws Exception {
    int ok = 0, bad = 0;
    for (String line : Files.readAllLines(Paths.get(args[0]))) {
      String[] p = line.trim().split(" ");
      String name = p[0]; short v = Short.parseShort(p[1]); String hex = p.length > 3 ? p[3] : "";
      byte[] in = HexFormat.of().parseHex(hex);
      try {
        Class<?> c = Class.forName("org.apache.kafka.common.message." + name + "Data");
        Message m = (Message) c.getConstructor(org.apache.kafka.common.protocol.Readable.class, short.class).newInstance(new ByteBufferAccessor(ByteBuffer.wrap(in)), v);
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = m.size(cache, v);
        ByteBuffer out = ByteBuffer.allocate(size);
        m.write(new ByteBufferAccessor(out), cache, v);
        String again = HexFormat.of().formatHex(out.array());
        if (again.equals(hex)) { ok++; } else { bad++; System.out.println("MISMATCH " + name + " v" + v + "\n ours " + hex + "\n java " + again); }
      } catch (Throwable t) {
        bad++;
        Throwable cause = t.getCause() != null ? t.getCause() : t;
        System.out.println("ERROR " + name + " v" + v + ": " + cause);
      }
    }
    System.out.println("ok " + ok + " bad " + bad);
    System.exit(bad == 0 ? 0 : 1);
  }
}
