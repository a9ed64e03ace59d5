'use strict';
// Starts a node target's server (the module named on the command line) on
// every CPU it is given, with Node's cluster module: one worker process per
// CPU, as Express's production guide says ("Run your app in a cluster ...
// ideally one instance on each CPU core") and as Fastify's Recommendations
// allow when optimising for throughput (1 vCPU per instance).
//
// CPUs are SERVER_CPUS when the runner sets it (see ../SPEC.md), else
// os.availableParallelism() (the CPUs this process may run on). With
// DB_POOL_SIZE set, the count is capped at it, since every worker opens at
// least one connection of the total. Workers learn the count from
// WEB_CONCURRENCY and take max(1, DB_POOL_SIZE / WEB_CONCURRENCY)
// connections each. With one worker the server runs in this process: a
// primary that only hands out connections would be pure overhead.
//
// The primary forwards SIGTERM/SIGINT to the workers and exits once they
// have; a worker that dies otherwise is logged and replaced (Express's guide).

const cluster = require('node:cluster');
const os = require('node:os');
const path = require('node:path');

const name = path.basename(process.cwd());

function positive(variable) {
  const raw = process.env[variable];
  if (!/^[1-9][0-9]*$/.test(raw)) {
    console.error(`${name}: ${variable} must be a positive integer, got ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return Number(raw);
}

function workerCount() {
  const cpus = process.env.SERVER_CPUS ? positive('SERVER_CPUS') : os.availableParallelism();
  return process.env.DB_POOL_SIZE ? Math.min(cpus, positive('DB_POOL_SIZE')) : cpus;
}

function runPrimary(server, workers) {
  cluster.setupPrimary({ exec: server });
  let stopping = false;
  const fork = () => cluster.fork({ WEB_CONCURRENCY: String(workers) });
  for (let i = 0; i < workers; i++) fork();
  console.error(`${name}: cluster of ${workers} workers`);

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers).length === 0) process.exit(0);
      return;
    }
    console.error(`${name}: worker ${worker.process.pid} died (${signal || code}); starting another`);
    fork();
  });

  const stop = (signal) => {
    if (stopping) return;
    stopping = true;
    for (const worker of Object.values(cluster.workers)) worker.process.kill(signal);
    if (Object.keys(cluster.workers).length === 0) process.exit(0);
    setTimeout(() => process.exit(0), 4000).unref(); // the workers exit within 3 s
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

const server = process.argv[2] && path.resolve(process.argv[2]);
if (!server) {
  console.error('usage: node cluster.js <server.js>');
  process.exit(2);
}
const workers = workerCount();
if (workers === 1) {
  process.env.WEB_CONCURRENCY = '1';
  require(server);
} else {
  runPrimary(server, workers);
}
