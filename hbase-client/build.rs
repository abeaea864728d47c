//! Compiles HBase 2.6.1's protocol (the `.proto` files of `hbase-protocol-shaded`, in
//! `proto/`) into Rust with prost, parsing them with protox so that no `protoc` is needed.

fn main() {
    let files = [
        "Client.proto",
        "RPC.proto",
        "Master.proto",
        "Registry.proto",
        "ZooKeeper.proto",
        "ClusterId.proto",
        // The procedures' state messages: what a split, a move or a crash recovery acts on.
        "MasterProcedure.proto",
    ];
    println!("cargo:rerun-if-changed=proto");
    let descriptors = protox::compile(files, ["proto"]).expect("HBase's .proto files compile");
    prost_build::Config::new()
        .bytes(["."])
        .compile_fds(descriptors)
        .expect("prost generates HBase's messages");
}
