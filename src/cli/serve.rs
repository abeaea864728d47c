//! `tallrow serve`: the embedded store over HBase's Thrift API.

use super::ServeArgs;
use crate::store::backend::Backend;
use anyhow::Context;
use std::process::ExitCode;
use std::sync::Arc;

pub(super) fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    use std::net::ToSocketAddrs;
    let bind = args
        .bind
        .to_socket_addrs()
        .with_context(|| format!("--bind {}: not a HOST:PORT address", args.bind))?
        .next()
        .with_context(|| format!("--bind {}: resolves to no address", args.bind))?;
    if !bind.ip().is_loopback() && !args.allow_remote {
        anyhow::bail!(
            "--bind {}: not a loopback address; the server has no authentication, so pass --allow-remote to serve other hosts",
            args.bind
        );
    }
    // Each connection is a thread, and each thread's first allocation faults in a page of
    // the allocator's arena: a 2 MiB transparent huge page where the kernel has them on
    // ("always"), which made an idle connection cost 2.5 MB instead of about 0.3.
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_thp_disable(true);
    let store = Backend::Embedded(args.data.clone())
        .open()
        .with_context(|| format!("cannot open --data {}", args.data.display()))?;
    let metrics = args
        .metrics
        .as_ref()
        .map(|addr| -> anyhow::Result<_> {
            let m = Arc::new(crate::metrics::Metrics::new(
                "serve",
                &[("data", args.data.display().to_string()), ("api", args.api.to_string())],
            ));
            let exporter = crate::metrics::http::Exporter::start(addr, args.allow_remote, m.clone())?;
            Ok((m, exporter))
        })
        .transpose()?;
    let opts = crate::serve::Options {
        bind,
        api: args.api,
        transport: args.transport,
        protocol: args.protocol,
        max_message: args.max_request_mib << 20,
        max_connections: args.max_connections,
        idle_timeout: Some(args.idle_timeout).filter(|t| !t.is_zero()),
        scanner_lease: args.scanner_lease,
        max_scanners_per_connection: args.max_scanners_per_connection,
        metrics: metrics.as_ref().map(|(m, _)| m.clone()),
        in_place: true,
    };
    let server = crate::serve::Server::start(store, &opts)?;
    // Tests and scripts read this line for the port.
    println!(
        "serving {} on {} ({}, {}/{})",
        args.data.display(),
        server.addr(),
        opts.api,
        opts.transport,
        opts.protocol
    );
    if let Some((_, exporter)) = &metrics {
        println!("metrics at http://{}/metrics", exporter.addr());
    }
    use std::io::Write;
    std::io::stdout().flush()?;
    server.wait();
    Ok(ExitCode::SUCCESS)
}
