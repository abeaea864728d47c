//! The `THBaseService` arguments a caller may leave out, by field id and type, from HBase's
//! hbase.thrift: those not marked `required` there. The generated processor requires every
//! argument; the server's reader fills omitted ones with empty values, as HBase's Java
//! server sees them (a missing expected value in the check calls checks for absence).
//! `numRows` defaults to 1 in the IDL; an omitted one reads as 0 here.

use thrift::protocol::TType;

/// The optional arguments of `method`; empty for every other method.
pub fn of(method: &str) -> &'static [(i16, TType)] {
    use TType::*;
    match method {
        "checkAndPut" | "checkAndDelete" => &[(5, String)],
        "checkAndMutate" => &[(6, String)],
        "getScannerRows" => &[(2, I32)],
        "getScannerResults" => &[(3, I32)],
        "getRegionLocation" => &[(3, Bool)],
        "getTableDescriptorsByPattern" | "getTableNamesByPattern" => &[(1, String)],
        "createTable" | "isTableAvailableWithSplit" => &[(2, List)],
        _ => &[],
    }
}
