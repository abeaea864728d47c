package dev.tallrow.hfile;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.CellComparatorImpl;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.regionserver.HStoreFile;
import org.apache.hadoop.hbase.regionserver.StoreFileWriter;
import org.apache.hadoop.hbase.regionserver.StoreUtils;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Writes the HFile fixtures of tallrow's format tests (tests/fixtures/hfile/) with HBase's own
 * writer, configured as a region server configures it when it flushes or compacts cells
 * without tags (no compression, no tags, memstore timestamps included), with the data block
 * encoding and bloom type given (NONE and ROW by default), and with its file-info times fixed
 * so that the file is the same on every run. A fourth argument, {@code tags}, includes tags
 * (each cell's tags length, 0) as HBase's MapReduce bulk load (HFileOutputFormat2) writes them;
 * or it names a codec (GZ, SNAPPY, LZ4, ZSTD), which compresses every block with the codec
 * HBase's default configuration picks for it.
 *
 * <pre>
 * Fixture OUT [ENCODING [BLOOM [tags|CODEC]]]
 *   scripts/hbase.sh java dev.tallrow.hfile.Fixture tests/fixtures/hfile/hbase.hfile
 *   scripts/hbase.sh java dev.tallrow.hfile.Fixture tests/fixtures/hfile/hbase-FAST_DIFF.hfile FAST_DIFF
 *   scripts/hbase.sh java dev.tallrow.hfile.Fixture tests/fixtures/hfile/hbase-GZ.hfile NONE ROW GZ
 * </pre>
 *
 * The data block (128 bytes), index chunk (200 bytes) and bloom chunk (64 bytes) sizes are
 * tiny, so that a file of a few hundred cells has every structure a large one has: many data
 * blocks, leaf and intermediate index blocks with a root over them, and several bloom chunks
 * of which the last is folded.
 */
public final class Fixture {
  /** The fixed times and task name; the format tests pass the same ones to tallrow. */
  static final long CREATE_TIME = 1767225600000L;
  static final long BULKLOAD_TIME = 1767225600123L;
  static final String TASK = "tallrow-fixture";

  private Fixture() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1 || args.length > 4) {
      System.err.println("usage: Fixture OUT [ENCODING [BLOOM [tags|CODEC]]]");
      System.exit(64);
    }
    boolean tags = args.length == 4 && args[3].equals("tags");
    Compression.Algorithm codec = args.length == 4 && !tags
      ? Compression.Algorithm.valueOf(args[3]) : Compression.Algorithm.NONE;
    DataBlockEncoding encoding =
      args.length > 1 ? DataBlockEncoding.valueOf(args[1]) : DataBlockEncoding.NONE;
    BloomType bloom = args.length > 2 ? BloomType.valueOf(args[2]) : BloomType.ROW;
    Configuration conf = HBaseConfiguration.create();
    conf.setInt("hfile.index.block.max.size", 200);
    conf.setInt("io.storefile.bloom.block.size", 64);
    FileSystem fs = FileSystem.getLocal(conf).getRawFileSystem();
    Path out = new Path(new java.io.File(args[0]).getAbsolutePath());
    fs.delete(out, false);

    byte[] family = Bytes.toBytes("f");
    HFileContext context = new HFileContextBuilder().withCompression(codec)
      .withDataBlockEncoding(encoding)
      .withChecksumType(StoreUtils.getChecksumType(conf))
      .withBytesPerCheckSum(StoreUtils.getBytesPerChecksum(conf)).withBlockSize(128)
      .withColumnFamily(family).withTableName(Bytes.toBytes("fixture"))
      .withCreateTime(CREATE_TIME).withIncludesTags(tags).build();
    StoreFileWriter w = new StoreFileWriter.Builder(conf, CacheConfig.DISABLED, fs)
      .withFilePath(out).withBloomType(bloom).withFileContext(context).build();
    for (KeyValue kv : cells(family)) {
      w.append(kv);
    }
    w.appendFileInfo(HStoreFile.BULKLOAD_TIME_KEY, Bytes.toBytes(BULKLOAD_TIME));
    w.appendFileInfo(HStoreFile.BULKLOAD_TASK_KEY, Bytes.toBytes(TASK));
    w.appendFileInfo(HStoreFile.MAJOR_COMPACTION_KEY, Bytes.toBytes(true));
    w.appendFileInfo(HStoreFile.EXCLUDE_FROM_MINOR_COMPACTION_KEY, Bytes.toBytes(false));
    w.appendTrackedTimestampsToMetadata();
    w.close();
  }

  /**
   * 240 rows of one to three columns of one to three versions: rows and qualifiers with 0x00
   * and 0xFF bytes and of different lengths, an empty qualifier, empty and long values.
   */
  static List<KeyValue> cells(byte[] family) {
    List<KeyValue> cells = new ArrayList<>();
    byte[][] qualifiers = { {}, Bytes.toBytes("a"), { 'b', 0 }, { (byte) 0xFF } };
    for (int i = 0; i < 240; i++) {
      byte[] row = new byte[1 + i % 5];
      row[0] = (byte) (i * 7);
      for (int j = 1; j < row.length; j++) {
        row[j] = (byte) (j % 2 == 0 ? 0 : 0xFF - i);
      }
      for (int q = 0; q <= i % 3; q++) {
        for (int v = 0; v <= (i + q) % 3; v++) {
          long ts = 1767225600000L + i * 1000L - v * 7L;
          byte[] value = new byte[(i * 13 + q * 5 + v) % 47];
          for (int k = 0; k < value.length; k++) {
            value[k] = (byte) (i + k);
          }
          cells.add(new KeyValue(row, family, qualifiers[(i + q) % 4], ts, KeyValue.Type.Put,
            value));
        }
      }
    }
    cells.sort(CellComparatorImpl.COMPARATOR);
    return cells;
  }
}
