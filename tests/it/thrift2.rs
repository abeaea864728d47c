//! The Thrift2 code generated from HBase's IDL (`tallrow::idl::thrift2`, by
//! scripts/gen_thrift2.sh) against real HBase's Thrift2 server: a table made, written with
//! per-cell timestamps in one `putMultiple`, read back with versions, and dropped.

use crate::common::real_hbase;
use std::net::TcpStream;
use tallrow::idl::thrift2::{
    TColumn, TColumnFamilyDescriptor, TColumnValue, TGet, THBaseServiceSyncClient, TPut, TTHBaseServiceSyncClient,
    TTableDescriptor, TTableName,
};
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel};

#[test]
fn generated_thrift2_client_round_trips_with_real_hbase() {
    let Some(addr) = real_hbase("TALLROW_HBASE_THRIFT2") else {
        return;
    };
    let stream = TcpStream::connect(&addr).unwrap();
    let (i, o) = TTcpChannel::with_stream(stream).split().unwrap();
    let mut c = THBaseServiceSyncClient::new(
        TBinaryInputProtocol::new(TBufferedReadTransport::new(i), true),
        TBinaryOutputProtocol::new(TBufferedWriteTransport::new(o), true),
    );
    let name = TTableName::new(None, format!("gen2_{}", std::process::id()).into_bytes());
    let no = None::<bool>;
    let family = TColumnFamilyDescriptor::new(
        b"f".to_vec(),
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        3,
        None,
        None,
        None,
        no,
        no,
        no,
        no,
        no,
        no,
        no,
    );
    let desc = TTableDescriptor::new(name.clone(), vec![family], None, None);
    c.create_table(desc, Vec::new()).expect("createTable");
    assert!(c.table_exists(name.clone()).unwrap());

    // Two versions of one cell and a second row, each cell with its own timestamp, one call.
    let cell = |q: &[u8], v: &[u8], ts: i64| TColumnValue::new(b"f".to_vec(), q.to_vec(), v.to_vec(), ts, None, None);
    let puts = vec![
        TPut::new(
            b"r1".to_vec(),
            vec![cell(b"a", b"old", 10), cell(b"a", b"new", 20)],
            None,
            None,
            None,
            None,
        ),
        TPut::new(b"r2".to_vec(), vec![cell(b"b", b"x", 30)], None, None, None, None),
    ];
    let table = [name.ns.clone().unwrap_or_default(), name.qualifier.clone()].concat();
    c.put_multiple(table.clone(), puts).expect("putMultiple");

    let mut get = TGet::new(
        b"r1".to_vec(),
        None,
        None,
        None,
        3,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
    );
    get.columns = Some(vec![TColumn::new(b"f".to_vec(), b"a".to_vec(), None)]);
    let got = c.get_multiple(table.clone(), vec![get]).expect("getMultiple");
    let versions: Vec<(i64, Vec<u8>)> = got[0]
        .column_values
        .iter()
        .map(|cv| (cv.timestamp.unwrap_or_default(), cv.value.clone()))
        .collect();
    assert_eq!(versions, vec![(20, b"new".to_vec()), (10, b"old".to_vec())]);

    c.disable_table(name.clone()).unwrap();
    c.delete_table(name.clone()).unwrap();
    assert!(!c.table_exists(name).unwrap());
}
