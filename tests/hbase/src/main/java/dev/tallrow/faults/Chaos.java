package dev.tallrow.faults;

import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Faults made by HBase itself, through its Java Admin, for the fault tests (tests/it/faults.rs).
 *
 * <pre>
 * Chaos shuffle TABLE ROUNDS   each round splits a region of TABLE that holds rows (at a row
 *                              it holds) and moves another to the other region server, each
 *                              waiting for its procedure; waits for rows first (the test starts
 *                              it beside a load); prints a line per action and per refused
 *                              split, each with its time from the start, then
 *                              "splits N moves M"
 * Chaos servers TABLE          prints "REGION SERVER" per region of TABLE
 * Chaos flush TABLE            flushes TABLE's regions; prints "flushed REGION SERVER" per
 *                              region
 * Chaos compact TABLE          major-compacts TABLE and waits until no region of it compacts;
 *                              prints "compacted REGION SERVER" per region
 * Chaos settle N               waits until N region servers are live and no region is in
 *                              transition; prints "settled"
 * </pre>
 *
 * ZooKeeper comes from TALLROW_HBASE_ZK (HOST:PORT), as scripts/hbase.sh writes it. Exits 1
 * with one line when HBase refuses or a wait runs past 300 s.
 */
public final class Chaos {
  private static final long WAIT_MS = 300_000;

  private Chaos() {}

  public static void main(String[] args) throws Exception {
    try {
      if (args.length == 3 && args[0].equals("shuffle")) {
        shuffle(TableName.valueOf(args[1]), Integer.parseInt(args[2]));
      } else if (args.length == 2 && args[0].equals("servers")) {
        servers(TableName.valueOf(args[1]));
      } else if (args.length == 2 && args[0].equals("flush")) {
        flush(TableName.valueOf(args[1]));
      } else if (args.length == 2 && args[0].equals("compact")) {
        compact(TableName.valueOf(args[1]));
      } else if (args.length == 2 && args[0].equals("settle")) {
        settle(Integer.parseInt(args[1]));
      } else {
        System.err.println("usage: Chaos shuffle TABLE ROUNDS | Chaos servers TABLE | Chaos flush TABLE | Chaos compact TABLE | Chaos settle N");
        System.exit(64);
      }
    } catch (Exception e) {
      System.err.println("chaos: " + e);
      System.exit(1);
    }
    System.exit(0);
  }

  private static Connection connect() throws IOException {
    return dev.tallrow.Cluster.connect();
  }


  private static List<ServerName> live(Admin admin) throws IOException {
    return new ArrayList<>(admin.getClusterMetrics(EnumSet.of(ClusterMetrics.Option.LIVE_SERVERS))
      .getLiveServerMetrics().keySet());
  }

  /** A row of the region [start, end) past its start key, or null when it holds fewer than 2. */
  private static byte[] rowInside(Table table, byte[] start, byte[] end) throws IOException {
    Scan scan = new Scan().withStartRow(start).withStopRow(end).setLimit(64).setCaching(64);
    scan.setFilter(new org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter());
    List<byte[]> rows = new ArrayList<>();
    try (ResultScanner s = table.getScanner(scan)) {
      for (Result r : s) {
        rows.add(r.getRow());
      }
    }
    for (int i = rows.size() / 2; i < rows.size(); i++) {
      if (Bytes.compareTo(rows.get(i), start) > 0) {
        return rows.get(i);
      }
    }
    return null;
  }

  private static void shuffle(TableName name, int rounds) throws Exception {
    Random random = new Random(20260101);
    int splits = 0;
    int moves = 0;
    long started = System.currentTimeMillis();
    java.util.function.Supplier<String> elapsed =
      () -> String.format("(at %.1f s)", (System.currentTimeMillis() - started) / 1000.0);
    java.util.Set<String> compacting = new java.util.HashSet<>();
    try (Connection conn = connect(); Admin admin = conn.getAdmin();
      Table table = conn.getTable(name); RegionLocator locator = conn.getRegionLocator(name)) {
      long deadline = System.currentTimeMillis() + WAIT_MS;
      for (int round = 0; round < rounds; round++) {
        // Split: a region that holds rows, at one of them.
        while (true) {
          // The table may not be there yet: the load creates it.
          List<HRegionLocation> regions = admin.tableExists(name) && admin.isTableAvailable(name)
            ? locator.getAllRegionLocations() : List.of();
          HRegionLocation pick = regions.isEmpty() ? null : regions.get(random.nextInt(regions.size()));
          byte[] at = pick == null ? null
            : rowInside(table, pick.getRegion().getStartKey(), pick.getRegion().getEndKey());
          if (at != null) {
            // A daughter still holding references to its parent's files, or a region
            // that moves, is not splittable: pick again.
            try {
              admin.splitRegionAsync(pick.getRegion().getRegionName(), at).get(WAIT_MS,
                TimeUnit.MILLISECONDS);
              splits++;
              System.out.println("split " + pick.getRegion().getEncodedName() + " at "
                + Bytes.toStringBinary(at) + " " + elapsed.get());
              break;
            } catch (IOException | java.util.concurrent.ExecutionException e) {
              // Most often a daughter of an earlier split, which splits only once a compaction
              // has rewritten its parent's files: it waits its turn behind every compaction
              // the server has queued (after the suite's restarts, many). A compaction asked
              // for by a client goes first (Store.PRIORITY_USER), as an operator would ask.
              String region = pick.getRegion().getEncodedName();
              boolean first = compacting.add(region);
              System.out.println("not split " + region + ", picking again"
                + (first ? " once it is compacted" : "") + " " + elapsed.get() + ": "
                + e.getMessage().split("\n")[0]);
              if (first) {
                try {
                  admin.compactRegion(pick.getRegion().getRegionName());
                } catch (IOException c) {
                  System.out.println("not compacted " + region + ": " + c.getMessage().split("\n")[0]);
                }
              }
            }
          }
          if (System.currentTimeMillis() > deadline) {
            throw new IllegalStateException(name + " has no region of 2 rows after 300 s");
          }
          Thread.sleep(200);
        }
        // Move: another region, to the other server. A region picked as it splits or
        // moves is refused: pick again.
        for (int attempt = 1;; attempt++) {
          List<HRegionLocation> regions = locator.getAllRegionLocations();
          HRegionLocation pick = regions.get(random.nextInt(regions.size()));
          ServerName from = pick.getServerName();
          ServerName to = null;
          for (ServerName s : live(admin)) {
            if (!s.equals(from)) {
              to = s;
            }
          }
          if (to == null) {
            throw new IllegalStateException("one live region server: nowhere to move a region");
          }
          try {
            admin.move(pick.getRegion().getEncodedNameAsBytes(), to);
          } catch (IOException e) {
            if (attempt == 10) {
              throw e;
            }
            Thread.sleep(200);
            continue;
          }
          moves++;
          System.out.println("moved " + pick.getRegion().getEncodedName() + " from " + from + " to " + to
            + " " + elapsed.get());
          break;
        }
      }
    }
    System.out.println("splits " + splits + " moves " + moves);
  }

  private static void servers(TableName name) throws Exception {
    try (Connection conn = connect(); RegionLocator locator = conn.getRegionLocator(name)) {
      for (HRegionLocation l : locator.getAllRegionLocations()) {
        System.out.println(l.getRegion().getEncodedName() + " " + l.getServerName());
      }
    }
  }

  private static void flush(TableName name) throws Exception {
    try (Connection conn = connect(); Admin admin = conn.getAdmin();
        RegionLocator locator = conn.getRegionLocator(name)) {
      admin.flush(name);
      for (HRegionLocation l : locator.getAllRegionLocations()) {
        System.out.println("flushed " + l.getRegion().getEncodedName() + " " + l.getServerName());
      }
    }
  }

  private static void compact(TableName name) throws Exception {
    long deadline = System.currentTimeMillis() + WAIT_MS;
    try (Connection conn = connect(); Admin admin = conn.getAdmin();
        RegionLocator locator = conn.getRegionLocator(name)) {
      admin.majorCompact(name);
      // A requested compaction can take a moment to show as running.
      Thread.sleep(1000);
      while (admin.getCompactionState(name) != org.apache.hadoop.hbase.client.CompactionState.NONE) {
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException(name + " still compacts after 300 s");
        }
        Thread.sleep(250);
      }
      for (HRegionLocation l : locator.getAllRegionLocations()) {
        System.out.println("compacted " + l.getRegion().getEncodedName() + " " + l.getServerName());
      }
    }
  }

  private static void settle(int servers) throws Exception {
    long deadline = System.currentTimeMillis() + WAIT_MS;
    try (Connection conn = connect(); Admin admin = conn.getAdmin()) {
      while (true) {
        ClusterMetrics m = admin.getClusterMetrics(EnumSet.of(ClusterMetrics.Option.LIVE_SERVERS,
          ClusterMetrics.Option.REGIONS_IN_TRANSITION));
        int live = m.getLiveServerMetrics().size();
        int moving = m.getRegionStatesInTransition().size();
        if (live == servers && moving == 0) {
          System.out.println("settled");
          return;
        }
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException(live + " region servers live and " + moving
            + " regions in transition after 300 s, waiting for " + servers + " and none");
        }
        Thread.sleep(500);
      }
    }
  }
}
