// Loads each input with java.util.Properties.load(InputStream), as Java
// YCSB loads a -P file, and prints what it holds: the golden vectors of
// TestJavaPropertiesGolden (regenerate with TestRegenerateJavaVectors).
//
// stdin: one input per line, in hex. stdout: one line per input, either
// "ERR <exception class>" or "OK" and then, per property in key order,
// " <key hex>=<value hex>" with key and value in UTF-8 (String.getBytes),
// the bytes a database binding is given.
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.TreeMap;

public class JavaProperties {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
    StringBuilder out = new StringBuilder();
    for (String line; (line = in.readLine()) != null; ) {
      Properties p = new Properties();
      try {
        p.load(new ByteArrayInputStream(unhex(line)));
      } catch (IllegalArgumentException e) {
        out.append("ERR ").append(e.getClass().getName()).append('\n');
        continue;
      }
      TreeMap<String, String> sorted = new TreeMap<>();
      for (String k : p.stringPropertyNames()) {
        sorted.put(hex(k.getBytes(StandardCharsets.UTF_8)), hex(p.getProperty(k).getBytes(StandardCharsets.UTF_8)));
      }
      out.append("OK");
      sorted.forEach((k, v) -> out.append(' ').append(k).append('=').append(v));
      out.append('\n');
    }
    System.out.write(out.toString().getBytes(StandardCharsets.US_ASCII));
    System.out.flush();
  }

  static byte[] unhex(String s) {
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return b;
  }

  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) {
      s.append(String.format("%02x", x & 0xff));
    }
    return s.toString();
  }
}
