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
    // The client's pause, which paces its polls of the master's procedures (scripts/hbase.sh
    // passes 20 ms); HBase's default without it.
    String pause = System.getProperty("tallrow.client.pause");
    if (pause != null) {
      conf.set(HConstants.HBASE_CLIENT_PAUSE, pause);
    }
    return ConnectionFactory.createConnection(conf);
  }
}
