'use strict';
// The TLS port of ../SPEC.md "TLS" for the node targets, read in one place:
// when TLS_PORT, TLS_CERT and TLS_KEY are all set, the options that Node's
// tls.createServer takes and its https and http2 servers pass on (Node docs,
// tls.createServer and tls.createSecureContext,
// https://nodejs.org/docs/latest-v20.x/api/tls.html#tlscreateserveroptions-secureconnectionlistener):
// TLS 1.2 at least (TLS 1.3 is offered too), and with TLS_CLIENT_CA a client
// certificate signed by it required (requestCert with rejectUnauthorized).
// Each worker of ./cluster.js listens on TLS_PORT as on PORT, so the cluster
// shares the TLS port the same way.

const fs = require('node:fs');

// { port, options } for the TLS port, or null when it is not asked for.
function tlsPort() {
  const { TLS_PORT, TLS_CERT, TLS_KEY, TLS_CLIENT_CA } = process.env;
  if (!TLS_PORT || !TLS_CERT || !TLS_KEY) return null;
  const options = {
    cert: fs.readFileSync(TLS_CERT),
    key: fs.readFileSync(TLS_KEY),
    minVersion: 'TLSv1.2',
  };
  if (TLS_CLIENT_CA) {
    options.ca = fs.readFileSync(TLS_CLIENT_CA);
    options.requestCert = true;
    options.rejectUnauthorized = true;
  }
  return { port: Number(TLS_PORT), options };
}

module.exports = { tlsPort };
