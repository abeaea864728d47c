package dev.tallrow;

import org.apache.hadoop.hbase.RegionMetrics;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.CompactionState;
import org.apache.hadoop.hbase.client.Connection;

/**
 * Major-compacts tables through HBase's Java Admin (every table asked at once) and waits until
 * every file of each was rewritten, as an operator's {@code major_compact} in the shell
 * followed by watching it finish:
 *
 * <pre>
 * Compact TABLE...   prints "compacted TABLE" per table
 * </pre>
 *
 * A table is done when no compaction runs on it and, in every region that holds files, the
 * oldest file that a major compaction wrote is younger than the request (each region
 * server's own {@code RegionMetrics}; a region without files has nothing to rewrite, and the
 * table-wide {@code Admin.getLastMajorCompactionTimestamp} would stay 0 for it). Exits 1 with
 * one line when HBase refuses or a table is not done within 600 s.
 */
public final class Compact {
  private static final long WAIT_MS = 600_000;

  private Compact() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      System.err.println("usage: Compact TABLE...");
      System.exit(64);
    }
    try (Connection c = Cluster.connect(); Admin admin = c.getAdmin()) {
      // Every table asked first, so that the region servers compact them side by side (each
      // in its own compaction threads), then each waited for in turn.
      long requested = System.currentTimeMillis();
      long deadline = requested + WAIT_MS;
      for (String name : args) {
        admin.majorCompact(TableName.valueOf(name));
      }
      for (String name : args) {
        TableName table = TableName.valueOf(name);
        while (admin.getCompactionState(table) != CompactionState.NONE
          || !rewritten(admin, table, requested)) {
          if (System.currentTimeMillis() > deadline) {
            throw new IllegalStateException("the major compaction of " + name
              + " did not rewrite every file within 600 s");
          }
          Thread.sleep(250);
        }
        System.out.println("compacted " + name);
      }
    } catch (Exception e) {
      System.err.println("compact: " + e);
      System.exit(1);
    }
    System.exit(0);
  }

  /** Whether every region of the table that holds files was major-compacted after `since`. */
  private static boolean rewritten(Admin admin, TableName table, long since) throws java.io.IOException {
    for (ServerName server : admin.getRegionServers()) {
      for (RegionMetrics r : admin.getRegionMetrics(server, table)) {
        if (r.getStoreFileCount() > 0 && r.getLastMajorCompactionTimestamp() < since) {
          return false;
        }
      }
    }
    return true;
  }
}
