//! `shootout certs DIR`: writes a throw-away CA, a server certificate for
//! 127.0.0.1, ::1 and localhost and a client certificate signed by it as PEM
//! files (`shootout_certs`), for loading a TLS server by hand. What it wrote
//! goes to stderr, the paths to stdout. A symbolic link where a file goes
//! is refused, or with `--force` replaced, never written through.

use crate::exit::Outcome;
use anyhow::Context;
use std::path::PathBuf;

/// Write throw-away TLS certificates (CA, server, client) as PEM files.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Files: ca.pem (the CA: --cacert, TLS_CLIENT_CA), server.pem and server.key \
    (TLS_CERT, TLS_KEY), client.pem and client.key (--cert, --key).\n\nExample:\n  \
    shootout certs /tmp/tls && shootout load --cacert /tmp/tls/ca.pem https://127.0.0.1:8443/"
)]
pub struct Args {
    /// The folder to write into (created if missing).
    pub dir: PathBuf,
    /// Replace certificate files that exist already.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let written = if args.force {
        shootout_certs::write_over(&args.dir)
    } else {
        shootout_certs::write(&args.dir)
    };
    let paths = written
        .map_err(|e| match e {
            shootout_certs::CertError::Exists(_) => {
                anyhow::anyhow!("{e}; pass --force to replace it")
            }
            shootout_certs::CertError::Link(_) => {
                anyhow::anyhow!("{e}; pass --force to replace the link itself")
            }
            // Its message holds its cause already: flattened, so that
            // the cause is not printed a second time as the chain's next.
            e => anyhow::anyhow!("{e}"),
        })
        .with_context(|| format!("shootout certs {}", args.dir.display()))?;
    eprintln!(
        "wrote a throw-away CA, a server certificate for {} and a client certificate signed by it:",
        shootout_certs::SERVER_NAMES.join(", ")
    );
    for path in paths.all() {
        println!("{}", path.display());
    }
    Ok(Outcome::Ok)
}
