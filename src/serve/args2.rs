//! The `THBaseService` arguments a caller may leave out, by field id and type, from HBase's
//! hbase.thrift: those not marked `required` there. The generated processor requires every
//! argument; the server's reader fills omitted ones with empty values, as HBase's Java
//! server sees them (a missing expected value in the check calls checks for absence), and
//! an omitted `numRows` as the IDL's default, 1, as the Java server's args struct holds it.

use crate::wire::Arg;
use thrift::protocol::TType;

/// The optional arguments of `method`; empty for every other method.
pub fn of(method: &str) -> &'static [Arg] {
    use TType::*;
    match method {
        "checkAndPut" | "checkAndDelete" => &[(5, String, 0)],
        "checkAndMutate" => &[(6, String, 0)],
        "getScannerRows" => &[(2, I32, 1)],
        "getScannerResults" => &[(3, I32, 1)],
        "getRegionLocation" => &[(3, Bool, 0)],
        "getTableDescriptorsByPattern" | "getTableNamesByPattern" => &[(1, String, 0)],
        "createTable" | "isTableAvailableWithSplit" => &[(2, List, 0)],
        _ => &[],
    }
}
