//! Deterministic synthetic data. Every generated value is a pure function of
//! `(seed, entity kind, id, field, index)`, so the same workload gives the same bytes whatever
//! the thread count or shard split, and a verifier regenerates instead of remembering.

pub mod rng;
