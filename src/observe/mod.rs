//! The cluster's side of a run: what HBase did while tallrow measured, read from its master
//! as HBase's own tools read it (its status and its procedures), as events on the run's time
//! line. [`events`] turns the master's successive answers into events; it knows nothing of
//! how they are fetched or where they are written.

pub mod events;
