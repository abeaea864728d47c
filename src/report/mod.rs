//! What tallrow prints and writes for people: aligned text tables and number formats.

mod text;

pub use text::{TextTable, thousands};
