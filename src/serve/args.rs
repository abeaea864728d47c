//! The argument list of every `Hbase` service call, by field id and type, from HBase's
//! Hbase.thrift. Clients omit null arguments (happybase leaves out `columns` when it reads
//! whole rows), while the generated processor requires every argument; the server's reader
//! fills omitted ones with empty values, which is how HBase's Java server sees them (null
//! lists and maps read as "all", a missing `value` in `checkAndPut` as "absent").

use crate::wire::Arg;
use thrift::protocol::TType;

/// The arguments of `method`; empty for an unknown method.
pub fn of(method: &str) -> &'static [Arg] {
    use TType::*;
    match method {
        "enableTable" => &[(1, String, 0)],
        "disableTable" => &[(1, String, 0)],
        "isTableEnabled" => &[(1, String, 0)],
        "compact" => &[(1, String, 0)],
        "majorCompact" => &[(1, String, 0)],
        "getColumnDescriptors" => &[(1, String, 0)],
        "getTableRegions" => &[(1, String, 0)],
        "createTable" => &[(1, String, 0), (2, List, 0)],
        "deleteTable" => &[(1, String, 0)],
        "get" => &[(1, String, 0), (2, String, 0), (3, String, 0), (4, Map, 0)],
        "getVer" => &[(1, String, 0), (2, String, 0), (3, String, 0), (4, I32, 0), (5, Map, 0)],
        "getVerTs" => &[
            (1, String, 0),
            (2, String, 0),
            (3, String, 0),
            (4, I64, 0),
            (5, I32, 0),
            (6, Map, 0),
        ],
        "getRow" => &[(1, String, 0), (2, String, 0), (3, Map, 0)],
        "getRowWithColumns" => &[(1, String, 0), (2, String, 0), (3, List, 0), (4, Map, 0)],
        "getRowTs" => &[(1, String, 0), (2, String, 0), (3, I64, 0), (4, Map, 0)],
        "getRowWithColumnsTs" => &[(1, String, 0), (2, String, 0), (3, List, 0), (4, I64, 0), (5, Map, 0)],
        "getRows" => &[(1, String, 0), (2, List, 0), (3, Map, 0)],
        "getRowsWithColumns" => &[(1, String, 0), (2, List, 0), (3, List, 0), (4, Map, 0)],
        "getRowsTs" => &[(1, String, 0), (2, List, 0), (3, I64, 0), (4, Map, 0)],
        "getRowsWithColumnsTs" => &[(1, String, 0), (2, List, 0), (3, List, 0), (4, I64, 0), (5, Map, 0)],
        "mutateRow" => &[(1, String, 0), (2, String, 0), (3, List, 0), (4, Map, 0)],
        "mutateRowTs" => &[(1, String, 0), (2, String, 0), (3, List, 0), (4, I64, 0), (5, Map, 0)],
        "mutateRows" => &[(1, String, 0), (2, List, 0), (3, Map, 0)],
        "mutateRowsTs" => &[(1, String, 0), (2, List, 0), (3, I64, 0), (4, Map, 0)],
        "atomicIncrement" => &[(1, String, 0), (2, String, 0), (3, String, 0), (4, I64, 0)],
        "deleteAll" => &[(1, String, 0), (2, String, 0), (3, String, 0), (4, Map, 0)],
        "deleteAllTs" => &[(1, String, 0), (2, String, 0), (3, String, 0), (4, I64, 0), (5, Map, 0)],
        "deleteAllRow" => &[(1, String, 0), (2, String, 0), (3, Map, 0)],
        "increment" => &[(1, Struct, 0)],
        "incrementRows" => &[(1, List, 0)],
        "deleteAllRowTs" => &[(1, String, 0), (2, String, 0), (3, I64, 0), (4, Map, 0)],
        "scannerOpenWithScan" => &[(1, String, 0), (2, Struct, 0), (3, Map, 0)],
        "scannerOpen" => &[(1, String, 0), (2, String, 0), (3, List, 0), (4, Map, 0)],
        "scannerOpenWithStop" => &[
            (1, String, 0),
            (2, String, 0),
            (3, String, 0),
            (4, List, 0),
            (5, Map, 0),
        ],
        "scannerOpenWithPrefix" => &[(1, String, 0), (2, String, 0), (3, List, 0), (4, Map, 0)],
        "scannerOpenTs" => &[(1, String, 0), (2, String, 0), (3, List, 0), (4, I64, 0), (5, Map, 0)],
        "scannerOpenWithStopTs" => &[
            (1, String, 0),
            (2, String, 0),
            (3, String, 0),
            (4, List, 0),
            (5, I64, 0),
            (6, Map, 0),
        ],
        "scannerGet" => &[(1, I32, 0)],
        "scannerGetList" => &[(1, I32, 0), (2, I32, 0)],
        "scannerClose" => &[(1, I32, 0)],
        "getRegionInfo" => &[(1, String, 0)],
        "append" => &[(1, Struct, 0)],
        "checkAndPut" => &[
            (1, String, 0),
            (2, String, 0),
            (3, String, 0),
            (5, String, 0),
            (6, Struct, 0),
            (7, Map, 0),
        ],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every method of the `Hbase` service in HBase's own IDL, with its arguments' ids and
    /// wire types.
    fn idl_methods() -> Vec<(String, Vec<(i16, TType)>)> {
        let idl = include_str!("../idl/hbase1.thrift");
        let no_block = regex_lite::Regex::new(r"(?s)/\*.*?\*/").unwrap();
        let no_line = regex_lite::Regex::new(r"//[^\n]*").unwrap();
        let idl = no_line.replace_all(&no_block.replace_all(idl, ""), "").into_owned();
        let body = &idl[idl.find("service Hbase {").expect("the Hbase service")..];
        let method = regex_lite::Regex::new(r"(\w+)\s*\(([^()]*)\)\s*(?:throws\s*\([^()]*\))?").unwrap();
        let arg = regex_lite::Regex::new(r"(\d+)\s*:\s*((?:map|list|set)\s*<[^>]*>|\w+)\s+\w+").unwrap();
        let wire = |t: &str| match t {
            "Text" | "Bytes" | "binary" | "string" => TType::String,
            "i32" | "ScannerID" => TType::I32,
            "i64" => TType::I64,
            "bool" => TType::Bool,
            t if t.starts_with("map") => TType::Map,
            t if t.starts_with("list") => TType::List,
            _ => TType::Struct,
        };
        method
            .captures_iter(body)
            .filter(|c| &c[1] != "throws")
            .map(|c| {
                let args = arg
                    .captures_iter(&c[2])
                    .map(|a| (a[1].parse().expect("an id"), wire(&a[2])))
                    .collect();
                (c[1].to_string(), args)
            })
            .collect()
    }

    #[test]
    fn every_method_takes_the_arguments_hbase_s_idl_declares() {
        let methods = idl_methods();
        // HBase 2.6's Hbase.thrift declares 47.
        assert_eq!(methods.len(), 47);
        let mut with_arguments = 0;
        for (name, declared) in methods {
            let table: Vec<(i16, TType)> = of(&name).iter().map(|&(id, t, _)| (id, t)).collect();
            assert_eq!(table, declared, "{name}");
            with_arguments += usize::from(!declared.is_empty());
        }
        assert!(with_arguments > 40, "{with_arguments}");
        assert!(of("noSuchMethod").is_empty());
    }
}
