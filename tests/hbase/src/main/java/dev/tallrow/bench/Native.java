package dev.tallrow.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.BufferedMutatorParams;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;

/**
 * What HBase's native Java client gets from the same server, for scripts/bench.sh hbase.
 *
 * <pre>
 * Native load DUMP               writes the rows benches/hbase.rs dumped (format in
 *                                scripts/rows_dump.py) with one BufferedMutator per table;
 *                                prints "rows N cells N seconds S cpu C" (only the writes
 *                                timed; C the process's CPU seconds meanwhile)
 * Native serve DUMP              the loader at its best, for benches/native.rs: reads the
 *                                rows into memory, then takes commands, one a line on stdin,
 *                                each answered on stdout, in one JVM that stays warm:
 *                                "load THREADS BUFFER_MB" creates the missing tables, then
 *                                times THREADS writers, each with its own BufferedMutator
 *                                per table of that write buffer over its share of the rows,
 *                                and prints the load line; "pages ARGS" runs `pages` (below)
 *                                and prints "done"; "quit" ends it
 * Native compact TABLE...       major-compacts the tables and waits until it is done
 * Native clone TABLE COPY...    creates each COPY from a snapshot of its TABLE (same
 *                                descriptor, same regions, the files shared as links until
 *                                COPY rewrites them)
 * Native pages FILE TABLE FAMILY QUALIFIER SAMPLES
 *                                FILE holds "CURSOR STOP" per line, row keys in hex; times a
 *                                get of the cursor row and pages of 10 and 100 rows after it;
 *                                prints one line of nanoseconds per kind ("get", "10", "100")
 * </pre>
 *
 * ZooKeeper comes from TALLROW_HBASE_ZK (HOST:PORT), as scripts/hbase.sh writes it.
 */
public final class Native {
  private Native() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 2 && args[0].equals("load")) {
      load(Path.of(args[1]));
    } else if (args.length == 2 && args[0].equals("serve")) {
      serve(Path.of(args[1]));
    } else if (args.length >= 2 && args[0].equals("compact")) {
      compact(List.of(args).subList(1, args.length));
    } else if (args.length >= 3 && args.length % 2 == 1 && args[0].equals("clone")) {
      cloneTables(List.of(args).subList(1, args.length));
    } else if (args.length == 6 && args[0].equals("pages")) {
      pages(Path.of(args[1]), args[2], args[3], args[4], Integer.parseInt(args[5]));
    } else {
      System.err.println("usage: Native load DUMP | Native serve DUMP | Native compact TABLE... | Native clone TABLE COPY... | Native pages FILE TABLE FAMILY QUALIFIER SAMPLES");
      System.exit(64);
    }
  }

  private static Connection connect() throws IOException {
    return dev.tallrow.Cluster.connect();
  }


  /** Little-endian reader of the dump, streamed: a dump may be larger than the heap. */
  private static final class Reader implements AutoCloseable {
    private final java.io.DataInputStream in;
    private final byte[] eight = new byte[8];
    private final ByteBuffer b = ByteBuffer.wrap(eight).order(ByteOrder.LITTLE_ENDIAN);

    Reader(Path dump) throws IOException {
      in = new java.io.DataInputStream(new java.io.BufferedInputStream(Files.newInputStream(dump), 1 << 20));
    }

    /** Whether another record follows; reads its first byte (the table) into u8(). */
    private int next = -2;

    boolean more() throws IOException {
      if (next == -2) {
        next = in.read();
      }
      return next >= 0;
    }

    int u8() throws IOException {
      if (next >= 0) {
        int v = next;
        next = -2;
        return v;
      }
      return in.readUnsignedByte();
    }

    private ByteBuffer read(int n) throws IOException {
      in.readFully(eight, 0, n);
      b.clear();
      return b;
    }

    int u16() throws IOException {
      return read(2).getShort() & 0xffff;
    }

    int u32() throws IOException {
      return read(4).getInt();
    }

    long i64() throws IOException {
      return read(8).getLong();
    }

    byte[] blob(int width) throws IOException {
      int n = width == 2 ? u16() : u32();
      byte[] out = new byte[n];
      in.readFully(out);
      return out;
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }

  private static void load(Path dump) throws Exception {
    try (Reader r = new Reader(dump)) {
      load(r);
    }
  }

  /** Clones each TABLE COPY pair through a snapshot, dropped once COPY exists. */
  private static void cloneTables(List<String> pairs) throws IOException {
    try (Connection conn = connect(); Admin admin = conn.getAdmin()) {
      for (int i = 0; i < pairs.size(); i += 2) {
        String snapshot = "tallrow_clone_" + System.nanoTime();
        admin.snapshot(snapshot, TableName.valueOf(pairs.get(i)));
        try {
          admin.cloneSnapshot(snapshot, TableName.valueOf(pairs.get(i + 1)));
        } finally {
          admin.deleteSnapshot(snapshot);
        }
      }
    }
  }

  /** Major-compacts the tables and waits until every compaction is done. */
  private static void compact(List<String> tables) throws Exception {
    try (Connection conn = connect(); Admin admin = conn.getAdmin()) {
      for (String t : tables) {
        admin.majorCompact(TableName.valueOf(t));
      }
      for (String t : tables) {
        // A requested compaction can take a moment to show as running.
        Thread.sleep(1000);
        while (admin.getCompactionState(TableName.valueOf(t))
            != org.apache.hadoop.hbase.client.CompactionState.NONE) {
          Thread.sleep(500);
        }
      }
    }
  }

  /** The dump's tables: their names, and their families with the versions each keeps. */
  private static final class Tables {
    final List<TableName> names = new ArrayList<>();
    final List<Map<String, Integer>> families = new ArrayList<>();

    Tables(Reader r) throws IOException {
      int tableCount = r.u32();
      for (int i = 0; i < tableCount; i++) {
        names.add(TableName.valueOf(new String(r.blob(2), StandardCharsets.UTF_8)));
        Map<String, Integer> f = new HashMap<>();
        int n = r.u16();
        for (int j = 0; j < n; j++) {
          f.put(new String(r.blob(2), StandardCharsets.UTF_8), r.u32());
        }
        families.add(f);
      }
    }

    /** Whether table `i` is written (a table of no family is not). */
    boolean written(int i) {
      return !families.get(i).isEmpty();
    }

    /** Creates the written tables that are not there. */
    void create(Admin admin) throws IOException {
      for (int i = 0; i < names.size(); i++) {
        if (!written(i) || admin.tableExists(names.get(i))) {
          continue;
        }
        TableDescriptorBuilder t = TableDescriptorBuilder.newBuilder(names.get(i));
        for (Map.Entry<String, Integer> f : families.get(i).entrySet()) {
          t.setColumnFamily(
              ColumnFamilyDescriptorBuilder.newBuilder(f.getKey().getBytes(StandardCharsets.UTF_8))
                  .setMaxVersions(f.getValue())
                  .build());
        }
        admin.createTable(t.build());
      }
    }
  }

  /** The next row's put, after its table's byte ([`Reader#u8`]). */
  private static Put readPut(Reader r) throws IOException {
    Put put = new Put(r.blob(4));
    int n = r.u32();
    for (int j = 0; j < n; j++) {
      byte[] family = r.blob(2);
      byte[] qualifier = r.blob(4);
      long ts = r.i64();
      byte[] value = r.blob(4);
      put.addColumn(family, qualifier, ts == Long.MIN_VALUE ? HConstants.LATEST_TIMESTAMP : ts, value);
    }
    return put;
  }

  private static void load(Reader r) throws Exception {
    Tables tables = new Tables(r);
    try (Connection conn = connect(); Admin admin = conn.getAdmin()) {
      tables.create(admin);
      BufferedMutator[] mutators = new BufferedMutator[tables.names.size()];
      for (int i = 0; i < mutators.length; i++) {
        if (tables.written(i)) {
          mutators[i] = conn.getBufferedMutator(new BufferedMutatorParams(tables.names.get(i)));
        }
      }
      long rows = 0;
      long cells = 0;
      com.sun.management.OperatingSystemMXBean os =
          (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
      long cpuStarted = os.getProcessCpuTime();
      long started = System.nanoTime();
      while (r.more()) {
        int table = r.u8();
        Put put = readPut(r);
        mutators[table].mutate(put);
        rows++;
        cells += put.size();
      }
      for (BufferedMutator m : mutators) {
        if (m != null) {
          m.close();
        }
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      double cpu = (os.getProcessCpuTime() - cpuStarted) / 1e9;
      System.out.printf("rows %d cells %d seconds %.3f cpu %.3f%n", rows, cells, seconds, cpu);
    }
  }

  /** The dump's tables and rows, in memory. */
  private static final class Rows {
    final Tables tables;
    /** Per row: its table's index, and its put. */
    final int[] tableOf;
    final List<Put> puts = new ArrayList<>();
    long cells;

    Rows(Reader r) throws IOException {
      tables = new Tables(r);
      List<Integer> of = new ArrayList<>();
      while (r.more()) {
        of.add(r.u8());
        Put put = readPut(r);
        puts.add(put);
        cells += put.size();
      }
      tableOf = of.stream().mapToInt(Integer::intValue).toArray();
    }
  }

  private static void serve(Path dump) throws Exception {
    Rows rows;
    try (Reader r = new Reader(dump)) {
      rows = new Rows(r);
    }
    java.io.BufferedReader in =
        new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
    try (Connection conn = connect(); Admin admin = conn.getAdmin()) {
      System.out.println("ready " + rows.puts.size());
      System.out.flush();
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        String[] a = line.trim().split(" ");
        if (a[0].equals("quit")) {
          break;
        } else if (a.length == 3 && a[0].equals("load")) {
          rows.tables.create(admin);
          loadInMemory(conn, rows, Integer.parseInt(a[1]), Long.parseLong(a[2]) << 20);
        } else if (a.length == 6 && a[0].equals("pages")) {
          pages(Path.of(a[1]), a[2], a[3], a[4], Integer.parseInt(a[5]));
          System.out.println("done");
        } else {
          System.out.println("error: unknown command " + line);
        }
        System.out.flush();
      }
    }
  }

  /** Times `threads` writers over contiguous shares of the rows, each with a mutator per table. */
  private static void loadInMemory(Connection conn, Rows rows, int threads, long buffer) throws Exception {
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    int n = rows.puts.size();
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
    List<java.util.concurrent.Future<?>> done = new ArrayList<>();
    long cpuStarted = os.getProcessCpuTime();
    long started = System.nanoTime();
    for (int t = 0; t < threads; t++) {
      int from = (int) ((long) n * t / threads);
      int to = (int) ((long) n * (t + 1) / threads);
      done.add(pool.submit(() -> {
        BufferedMutator[] mutators = new BufferedMutator[rows.tables.names.size()];
        try {
          for (int i = from; i < to; i++) {
            int table = rows.tableOf[i];
            if (mutators[table] == null) {
              mutators[table] = conn.getBufferedMutator(
                  new BufferedMutatorParams(rows.tables.names.get(table)).writeBufferSize(buffer));
            }
            mutators[table].mutate(rows.puts.get(i));
          }
        } finally {
          for (BufferedMutator m : mutators) {
            if (m != null) {
              m.close();
            }
          }
        }
        return null;
      }));
    }
    for (java.util.concurrent.Future<?> f : done) {
      f.get();
    }
    pool.shutdown();
    double seconds = (System.nanoTime() - started) / 1e9;
    double cpu = (os.getProcessCpuTime() - cpuStarted) / 1e9;
    System.out.printf("rows %d cells %d seconds %.3f cpu %.3f%n", n, rows.cells, seconds, cpu);
  }

  private static byte[] hex(String s) {
    byte[] out = new byte[s.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }

  private static void pages(Path file, String table, String family, String qualifier, int samples)
      throws Exception {
    List<byte[][]> starts = new ArrayList<>();
    for (String line : Files.readAllLines(file)) {
      String[] parts = line.trim().split(" ");
      starts.add(new byte[][] {hex(parts[0]), hex(parts[1])});
    }
    byte[] f = family.getBytes(StandardCharsets.UTF_8);
    byte[] q = qualifier.getBytes(StandardCharsets.UTF_8);
    int[] sizes = {10, 100};
    long[] gets = new long[samples];
    long[][] pages = new long[sizes.length][samples];
    try (Connection conn = connect(); Table t = conn.getTable(TableName.valueOf(table))) {
      // The first pass warms caches, connections and the JIT; the second is measured.
      for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < samples; i++) {
          byte[][] s = starts.get(i % starts.size());
          long at = System.nanoTime();
          Result got = t.get(new Get(s[0]).addColumn(f, q));
          gets[i] = System.nanoTime() - at;
          if (got.isEmpty()) {
            throw new IllegalStateException("the cursor row is missing");
          }
          for (int k = 0; k < sizes.length; k++) {
            Scan scan =
                new Scan()
                    .withStartRow(s[0], false)
                    .withStopRow(s[1])
                    .addColumn(f, q)
                    .setLimit(sizes[k])
                    .setCaching(sizes[k]);
            at = System.nanoTime();
            int n = 0;
            try (ResultScanner rs = t.getScanner(scan)) {
              for (Result row : rs) {
                n++;
              }
            }
            pages[k][i] = System.nanoTime() - at;
            if (n != sizes[k]) {
              throw new IllegalStateException("a page of " + sizes[k] + " read " + n + " rows");
            }
          }
        }
      }
    }
    print("get", gets);
    for (int k = 0; k < sizes.length; k++) {
      print(Integer.toString(sizes[k]), pages[k]);
    }
  }

  private static void print(String kind, long[] nanos) {
    StringBuilder b = new StringBuilder(kind);
    for (long n : nanos) {
      b.append(' ').append(n);
    }
    System.out.println(b);
  }
}
