//! The argument list of every `Hbase` service call, by field id and type, from HBase's
//! Hbase.thrift. Clients omit null arguments (happybase leaves out `columns` when it reads
//! whole rows), while the generated processor requires every argument; the server's reader
//! fills omitted ones with empty values, which is how HBase's Java server sees them (null
//! lists and maps read as "all", a missing `value` in `checkAndPut` as "absent").

use thrift::protocol::TType;

/// The arguments of `method`; empty for an unknown method.
pub fn of(method: &str) -> &'static [(i16, TType)] {
    use TType::*;
    match method {
        "enableTable" => &[(1, String)],
        "disableTable" => &[(1, String)],
        "isTableEnabled" => &[(1, String)],
        "compact" => &[(1, String)],
        "majorCompact" => &[(1, String)],
        "getColumnDescriptors" => &[(1, String)],
        "getTableRegions" => &[(1, String)],
        "createTable" => &[(1, String), (2, List)],
        "deleteTable" => &[(1, String)],
        "get" => &[(1, String), (2, String), (3, String), (4, Map)],
        "getVer" => &[(1, String), (2, String), (3, String), (4, I32), (5, Map)],
        "getVerTs" => &[(1, String), (2, String), (3, String), (4, I64), (5, I32), (6, Map)],
        "getRow" => &[(1, String), (2, String), (3, Map)],
        "getRowWithColumns" => &[(1, String), (2, String), (3, List), (4, Map)],
        "getRowTs" => &[(1, String), (2, String), (3, I64), (4, Map)],
        "getRowWithColumnsTs" => &[(1, String), (2, String), (3, List), (4, I64), (5, Map)],
        "getRows" => &[(1, String), (2, List), (3, Map)],
        "getRowsWithColumns" => &[(1, String), (2, List), (3, List), (4, Map)],
        "getRowsTs" => &[(1, String), (2, List), (3, I64), (4, Map)],
        "getRowsWithColumnsTs" => &[(1, String), (2, List), (3, List), (4, I64), (5, Map)],
        "mutateRow" => &[(1, String), (2, String), (3, List), (4, Map)],
        "mutateRowTs" => &[(1, String), (2, String), (3, List), (4, I64), (5, Map)],
        "mutateRows" => &[(1, String), (2, List), (3, Map)],
        "mutateRowsTs" => &[(1, String), (2, List), (3, I64), (4, Map)],
        "atomicIncrement" => &[(1, String), (2, String), (3, String), (4, I64)],
        "deleteAll" => &[(1, String), (2, String), (3, String), (4, Map)],
        "deleteAllTs" => &[(1, String), (2, String), (3, String), (4, I64), (5, Map)],
        "deleteAllRow" => &[(1, String), (2, String), (3, Map)],
        "increment" => &[(1, Struct)],
        "incrementRows" => &[(1, List)],
        "deleteAllRowTs" => &[(1, String), (2, String), (3, I64), (4, Map)],
        "scannerOpenWithScan" => &[(1, String), (2, Struct), (3, Map)],
        "scannerOpen" => &[(1, String), (2, String), (3, List), (4, Map)],
        "scannerOpenWithStop" => &[(1, String), (2, String), (3, String), (4, List), (5, Map)],
        "scannerOpenWithPrefix" => &[(1, String), (2, String), (3, List), (4, Map)],
        "scannerOpenTs" => &[(1, String), (2, String), (3, List), (4, I64), (5, Map)],
        "scannerOpenWithStopTs" => &[(1, String), (2, String), (3, String), (4, List), (5, I64), (6, Map)],
        "scannerGet" => &[(1, I32)],
        "scannerGetList" => &[(1, I32), (2, I32)],
        "scannerClose" => &[(1, I32)],
        "getRegionInfo" => &[(1, String)],
        "append" => &[(1, Struct)],
        "checkAndPut" => &[
            (1, String),
            (2, String),
            (3, String),
            (5, String),
            (6, Struct),
            (7, Map),
        ],
        "grant" => &[(1, Struct)],
        "revoke" => &[(1, Struct)],
        _ => &[],
    }
}
