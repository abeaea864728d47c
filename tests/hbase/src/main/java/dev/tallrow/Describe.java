package dev.tallrow;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.TableDescriptor;

/**
 * Each table's families as HBase's Java Admin describes them, one line each, in the order
 * the tables are named (one JVM for all of them: its start is most of the cost):
 *
 * <pre>
 * TABLE FAMILY COMPRESSION=SNAPPY DATA_BLOCK_ENCODING=FAST_DIFF BLOOMFILTER=ROWCOL BLOCKSIZE=65536 TTL=2147483647 VERSIONS=1
 * </pre>
 *
 * The tests hold what tallrow created to it. Exits 1 with one line when HBase refuses.
 */
public final class Describe {
  private Describe() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      System.err.println("usage: Describe TABLE...");
      System.exit(64);
    }
    try (Connection c = Cluster.connect(); Admin admin = c.getAdmin()) {
      for (String table : args) {
        TableDescriptor t = admin.getDescriptor(TableName.valueOf(table));
        for (ColumnFamilyDescriptor f : t.getColumnFamilies()) {
          System.out.println(table + " " + f.getNameAsString()
                + " COMPRESSION=" + f.getCompressionType().getName().toUpperCase(java.util.Locale.ROOT)
                + " DATA_BLOCK_ENCODING=" + f.getDataBlockEncoding()
                + " BLOOMFILTER=" + f.getBloomFilterType()
                + " BLOCKSIZE=" + f.getBlocksize()
                + " TTL=" + f.getTimeToLive()
                + " VERSIONS=" + f.getMaxVersions());
        }
      }
    } catch (Exception e) {
      System.err.println("describe: " + e);
      System.exit(1);
    }
    System.exit(0);
  }
}
