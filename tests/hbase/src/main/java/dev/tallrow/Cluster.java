package dev.tallrow;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;

/** The HBase that scripts/hbase.sh runs, as its .hbase.env names it. */
public final class Cluster {
  private Cluster() {}

  /** A connection through ZooKeeper at TALLROW_HBASE_ZK (HOST:PORT). */
  public static Connection connect() throws IOException {
    String zk = System.getenv("TALLROW_HBASE_ZK");
    if (zk == null) {
      throw new IllegalStateException("TALLROW_HBASE_ZK is not set: run scripts/hbase.sh start");
    }
    Configuration conf = HBaseConfiguration.create();
    int colon = zk.lastIndexOf(':');
    conf.set(HConstants.ZOOKEEPER_QUORUM, zk.substring(0, colon));
    conf.set(HConstants.ZOOKEEPER_CLIENT_PORT, zk.substring(colon + 1));
    return ConnectionFactory.createConnection(conf);
  }
}
