//! The Thrift2 code generated from HBase's IDL (`tallrow::idl::thrift2`, by
//! scripts/gen_thrift.sh) and the store-model conversions (`tallrow::convert::thrift2`)
//! against real HBase's Thrift2 server: a table made, written with per-cell timestamps in
//! one `putMultiple`, read back with versions, deleted at or below timestamps, and dropped;
//! and `serve --api thrift2` finding the newest version a `DELETE_COLUMN` deletes.

use crate::common::{Harness, real_hbase};
use std::net::TcpStream;
use tallrow::convert::thrift2;
use tallrow::idl::thrift2::{THBaseServiceSyncClient, TTHBaseServiceSyncClient, TTableDescriptor, TTableName};
use tallrow::store::{Get, Mutation, Row};
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{
    ReadHalf, TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel, WriteHalf,
};

type Client = THBaseServiceSyncClient<
    TBinaryInputProtocol<TBufferedReadTransport<ReadHalf<TTcpChannel>>>,
    TBinaryOutputProtocol<TBufferedWriteTransport<WriteHalf<TTcpChannel>>>,
>;

#[test]
fn generated_thrift2_client_round_trips_with_real_hbase() {
    let Some(addr) = real_hbase("TALLROW_HBASE_THRIFT2") else {
        return;
    };
    let stream = TcpStream::connect(&addr).unwrap();
    let (i, o) = TTcpChannel::with_stream(stream).split().unwrap();
    let mut c: Client = THBaseServiceSyncClient::new(
        TBinaryInputProtocol::new(TBufferedReadTransport::new(i), true),
        TBinaryOutputProtocol::new(TBufferedWriteTransport::new(o), true),
    );
    let name = TTableName::new(None, format!("gen2_{}", std::process::id()).into_bytes());
    let family = thrift2::family_descriptor(b"f", 3);
    let desc = TTableDescriptor::new(name.clone(), vec![family], None, None);
    c.create_table(desc, Vec::new()).expect("createTable");
    assert!(c.table_exists(name.clone()).unwrap());

    // Two versions of one cell and a second row, each cell with its own timestamp, one call,
    // built by the shared conversions (tallrow::convert::thrift2).
    let r1 = [
        Mutation::put("f", "a", 10, "old"),
        Mutation::put("f", "a", 20, "new"),
        Mutation::put("f", "b", 20, "b"),
    ];
    let r2 = [Mutation::put("f", "b", 30, "x")];
    let table = [name.ns.clone().unwrap_or_default(), name.qualifier.clone()].concat();
    c.put_multiple(
        table.clone(),
        vec![thrift2::tput(b"r1", &r1), thrift2::tput(b"r2", &r2)],
    )
    .expect("putMultiple");

    let mut get = Get::new(b"r1".to_vec());
    get.select.max_versions = 3;
    let read = |c: &mut Client, get: &Get| -> Row {
        let got = c
            .get_multiple(table.clone(), vec![thrift2::tget(get)])
            .expect("getMultiple");
        thrift2::row_of(got.into_iter().next().unwrap()).unwrap()
    };
    let cells: Vec<(Vec<u8>, i64, Vec<u8>)> = read(&mut c, &get)
        .cells
        .into_iter()
        .map(|c| (c.qualifier, c.timestamp, c.value))
        .collect();
    assert_eq!(
        cells,
        vec![
            (b"a".to_vec(), 20, b"new".to_vec()),
            (b"a".to_vec(), 10, b"old".to_vec()),
            (b"b".to_vec(), 20, b"b".to_vec()),
        ]
    );

    // Deletes at or below a timestamp, as the store means them: a column's versions up to
    // 10, then the family up to 20, which leaves nothing of r1.
    let column = Mutation::DeleteColumn {
        family: "f".into(),
        qualifier: b"a".to_vec(),
        timestamp: Some(10),
    };
    c.delete_single(table.clone(), thrift2::tdelete(b"r1", &column).unwrap())
        .unwrap();
    let left: Vec<i64> = read(&mut c, &get).cells.iter().map(|c| c.timestamp).collect();
    assert_eq!(left, vec![20, 20]);
    let family = Mutation::DeleteFamily {
        family: "f".into(),
        timestamp: Some(20),
    };
    c.delete_single(table.clone(), thrift2::tdelete(b"r1", &family).unwrap())
        .unwrap();
    assert!(read(&mut c, &get).cells.is_empty());
    let row = Mutation::DeleteRow { timestamp: Some(29) };
    c.delete_single(table.clone(), thrift2::tdelete(b"r2", &row).unwrap())
        .unwrap();
    assert_eq!(
        read(&mut c, &Get::new(b"r2".to_vec())).cells.len(),
        1,
        "the cell at 30 stays"
    );

    c.disable_table(name.clone()).unwrap();
    c.delete_table(name.clone()).unwrap();
    assert!(!c.table_exists(name).unwrap());
}

/// `serve --api thrift2` resolves a `DELETE_COLUMN` without a timestamp as HBase's region
/// server does (the differential test checks the same against real HBase, where it runs).
#[test]
fn serve_deletes_the_newest_version_as_hbase_does() {
    use tallrow::idl::thrift2::{TColumn, TColumnValue, TDelete, TDeleteType, TMutation, TPut, TRowMutations};
    use tallrow::store::{Column, TableDescriptor};
    let h = crate::common::ThriftHarness::thrift2();
    h.store()
        .create_table(&TableDescriptor::new("latest", &["f"], 5))
        .unwrap();
    let stream = TcpStream::connect(h.addr()).unwrap();
    let (i, o) = TTcpChannel::with_stream(stream).split().unwrap();
    let mut c: Client = THBaseServiceSyncClient::new(
        TBinaryInputProtocol::new(TBufferedReadTransport::new(i), true),
        TBinaryOutputProtocol::new(TBufferedWriteTransport::new(o), true),
    );
    let table = b"latest".to_vec();
    let cell =
        |q: &str, ts: i64| TColumnValue::new(b"f".to_vec(), q.as_bytes().to_vec(), b"v".to_vec(), ts, None, None);
    let put = TPut::new(
        b"r".to_vec(),
        vec![
            cell("a", 10),
            cell("a", 20),
            cell("a", 30),
            cell("b", 20),
            cell("b", 30),
            cell("d", 3),
        ],
        None,
        None,
        None,
        None,
    );
    c.put(table.clone(), put).unwrap();
    let newest = |qs: &[&str]| {
        let columns: Vec<TColumn> = qs
            .iter()
            .map(|q| TColumn::new(b"f".to_vec(), q.as_bytes().to_vec(), None))
            .collect();
        TDelete::new(b"r".to_vec(), columns, None, TDeleteType::DELETE_COLUMN, None, None)
    };
    let versions = |q: &str| {
        let mut g = Get::new(b"r".to_vec()).columns(vec![Column::qualifier("f", q)]);
        g.select.max_versions = 5;
        let got = h.store().get("latest", &[g]).unwrap().pop().flatten();
        got.map(|r| r.cells.iter().map(|c| c.timestamp).collect::<Vec<_>>())
            .unwrap_or_default()
    };

    // The newest version goes; twice in one TDelete, the two newest.
    c.delete_single(table.clone(), newest(&["a"])).unwrap();
    assert_eq!(versions("a"), [20, 10]);
    c.delete_single(table.clone(), newest(&["a", "a"])).unwrap();
    assert_eq!(versions("a"), Vec::<i64>::new());
    // Two TDeletes of one call both look at the row as it stood before the call.
    c.delete_multiple(table.clone(), vec![newest(&["b"]), newest(&["b"])])
        .unwrap();
    assert_eq!(versions("b"), [20]);
    // So does a mutateRow: its own put is not the newest version its delete finds.
    let mutations = vec![
        TMutation::Put(TPut::new(b"r".to_vec(), vec![cell("d", 5)], None, None, None, None)),
        TMutation::DeleteSingle(newest(&["d"])),
    ];
    c.mutate_row(table.clone(), TRowMutations::new(b"r".to_vec(), mutations))
        .unwrap();
    assert_eq!(versions("d"), [5]);
    // A column without versions has nothing to delete: the marker lands at the server's
    // time and hides only a put at that very millisecond, not an older one.
    c.delete_single(table.clone(), newest(&["e"])).unwrap();
    c.put(
        table.clone(),
        TPut::new(b"r".to_vec(), vec![cell("e", 1)], None, None, None, None),
    )
    .unwrap();
    assert_eq!(versions("e"), [1]);
    // DELETE_FAMILY_VERSION needs a timestamp: HBase's handler lets the exception escape.
    let no_ts = TDelete::new(
        b"r".to_vec(),
        vec![TColumn::new(b"f".to_vec(), None, None)],
        None,
        TDeleteType::DELETE_FAMILY_VERSION,
        None,
        None,
    );
    match c.delete_single(table.clone(), no_ts) {
        Err(thrift::Error::Application(e)) => assert!(e.message.contains("Internal error"), "{e}"),
        other => panic!("{other:?}"),
    }
}

/// Table and family attributes are byte strings: `serve --api thrift2` keeps any bytes
/// there (the table's state once failed to save a non-text key, and the connection died).
#[test]
fn serve_keeps_table_and_family_attributes_of_any_bytes() {
    let h = crate::common::ThriftHarness::thrift2();
    let stream = TcpStream::connect(h.addr()).unwrap();
    let (i, o) = TTcpChannel::with_stream(stream).split().unwrap();
    let mut c: Client = THBaseServiceSyncClient::new(
        TBinaryInputProtocol::new(TBufferedReadTransport::new(i), true),
        TBinaryOutputProtocol::new(TBufferedWriteTransport::new(o), true),
    );
    let attributes = std::collections::BTreeMap::from([(b"k\xff\x00".to_vec(), b"v\x80".to_vec())]);
    let mut family = thrift2::family_descriptor(b"f", 1);
    family.attributes = Some(attributes.clone());
    let name = TTableName::new(None, b"attrs".to_vec());
    let desc = TTableDescriptor::new(name.clone(), vec![family], attributes.clone(), None);
    c.create_table(desc, Vec::new()).expect("createTable");
    let got = c.get_table_descriptor(name).expect("getTableDescriptor");
    let table_attributes = got.attributes.unwrap_or_default();
    assert_eq!(
        table_attributes.get(&b"k\xff\x00"[..]),
        Some(&b"v\x80".to_vec()),
        "{table_attributes:?}"
    );
    let family_attributes = got.columns.unwrap_or_default()[0]
        .attributes
        .clone()
        .unwrap_or_default();
    assert_eq!(
        family_attributes.get(&b"k\xff\x00"[..]),
        Some(&b"v\x80".to_vec()),
        "{family_attributes:?}"
    );
}
