'use strict';
// node-fastify implements the shootout API contract (see ../SPEC.md) with
// Fastify 5, one process per CPU through ../node/cluster.js, logger off: bodies parsed by Fastify's JSON parser
// and validated by a body schema, answers serialised by fast-json-stringify
// through each route's response schema, csv-parse's stream API for file_read,
// bcrypt's async API (hashed on libuv's thread pool, off the event loop) and,
// for the database routes, one pg Pool per process with its share of
// DB_POOL_SIZE connections, with named (prepared) statements. Fortunes render through @fastify/view with EJS,
// which HTML-escapes every <%= %>. The WebSocket echo at /ws is
// @fastify/websocket, Fastify's own plugin over the ws package.

const fs = require('node:fs');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');
const { setTimeout: sleep } = require('node:timers/promises');

const bcrypt = require('bcrypt');
const { parse } = require('csv-parse');
const ejs = require('ejs');
const Fastify = require('fastify');
const fastifyView = require('@fastify/view');
const fastifyWebsocket = require('@fastify/websocket');
const pg = require('pg');

const { tlsPort } = require('../node/tls.js');

// Startup lines come from the first worker of ../node/cluster.js only: the
// others start while the first already answers, and the same lines again
// would read as output during requests.
const cluster = require('node:cluster');
const startupLog = cluster.isWorker && cluster.worker.id !== 1 ? () => {} : (line) => console.error(line);

const PORT = process.env.PORT;
const HOST = process.env.HOST || '127.0.0.1';
if (!PORT) {
  console.error('node-fastify: the PORT environment variable is required');
  process.exit(2);
}

// $DATA_DIR/titanic.csv, or ../data/titanic.csv relative to this folder.
const CSV_PATH = path.join(process.env.DATA_DIR || path.join(__dirname, '..', 'data'), 'titanic.csv');

// Opens and parses the CSV (quotes honoured) on every call; counts data rows.
async function countRows() {
  let records = 0;
  await pipeline(fs.createReadStream(CSV_PATH), parse(), async (source) => {
    for await (const _record of source) records++;
  });
  return Math.max(0, records - 1); // the header is not a data row
}

// --- database ---------------------------------------------------------------

const WORLD_ROWS = 10000;
const SELECT_WORLD = 'SELECT id, randomnumber FROM world WHERE id = $1';
const SELECT_FORTUNES = 'SELECT id, message FROM fortune';
const UPDATE_WORLDS =
  'UPDATE world SET randomnumber = v.r FROM unnest($1::int[], $2::int[]) AS v(id, r) WHERE world.id = v.id';
const ADDITIONAL_FORTUNE = 'Additional fortune added at request time.';

// This process's share of DB_POOL_SIZE (default 4): ../node/cluster.js runs
// WEB_CONCURRENCY processes of this server.
function poolSize() {
  const n = Number.parseInt(process.env.DB_POOL_SIZE ?? '', 10);
  const workers = Math.max(1, Number.parseInt(process.env.WEB_CONCURRENCY ?? '', 10) || 1);
  return Math.max(1, Math.floor((Number.isNaN(n) ? 4 : n) / workers));
}

// pg connects lazily, so the server starts even if the database is down.
let pool = null;
if (process.env.DATABASE_URL) {
  pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL,
    max: poolSize(),
    idleTimeoutMillis: 0, // keep connections (and their prepared statements)
  });
  // An idle connection that dies is dropped by the pool; don't crash.
  pool.on('error', (err) => console.error(`node-fastify: idle database connection: ${err.message}`));
  startupLog(`node-fastify: database pool: at most ${pool.options.max} connections`);
} else {
  startupLog('node-fastify: DATABASE_URL is not set: the database routes answer 503');
}

const selectWorld = (id) => ({ name: 'select-world', text: SELECT_WORLD, values: [id] });

function randomId() {
  return Math.floor(Math.random() * WORLD_ROWS) + 1;
}

// ?queries=Q clamped to 1..500; missing, empty or not an integer means 1.
function queryCount(value) {
  if (typeof value !== 'string' || !/^[+-]?\d+$/.test(value)) return 1;
  return Math.min(500, Math.max(1, Number(value)));
}

// n rows with independent random ids, one query per row, on one connection.
async function readWorlds(client, n) {
  const worlds = new Array(n);
  for (let i = 0; i < n; i++) {
    const { rows } = await client.query(selectWorld(randomId()));
    worlds[i] = { id: rows[0].id, randomNumber: rows[0].randomnumber };
  }
  return worlds;
}

// Runs fn with a connection of its own, released (or discarded on error).
async function withClient(fn) {
  const client = await pool.connect();
  try {
    const result = await fn(client);
    client.release();
    return result;
  } catch (err) {
    client.release(err);
    throw err;
  }
}

// Strings in code point order (what byte order of UTF-8 gives), not
// JavaScript's UTF-16 code unit order and not a locale collation: where both
// differing units are >= 0xD800, surrogates (astral code points) must sort
// after the BMP's 0xE000..0xFFFF.
function compareCodePoints(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) {
        x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
        y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
      }
      return x - y;
    }
  }
  return a.length - b.length;
}

// --- schemas ------------------------------------------------------------------

const messageSchema = {
  type: 'object',
  properties: { message: { type: 'string' } },
  required: ['message'],
};
const fileReadSchema = {
  type: 'object',
  properties: { message: { type: 'string' }, rows: { type: 'integer' } },
  required: ['message', 'rows'],
};
const payloadSchema = {
  type: 'object',
  properties: { payload: { type: 'string' } },
  required: ['payload'],
};
const worldSchema = {
  type: 'object',
  properties: { id: { type: 'integer' }, randomNumber: { type: 'integer' } },
  required: ['id', 'randomNumber'],
};
const worldsSchema = { type: 'array', items: worldSchema };

// A POST /test/* route: the body must be an object with a string payload
// (else 400), and the answer is {"payload": string}.
const payloadRoute = { schema: { body: payloadSchema, response: { 200: payloadSchema } } };

// --- routes -------------------------------------------------------------------

// One Fastify instance serves one server, so the cleartext port and the TLS
// port (SPEC.md "TLS") each get an instance with the same routes and hooks;
// `serverOptions` are the instance's own (Fastify docs, Server, `http2` and
// `https`).
function buildApp(serverOptions) {
  const app = Fastify({
    logger: false,
    // A payload must be a string: no coercion of 42 into "42".
    ajv: { customOptions: { coerceTypes: false } },
    ...serverOptions,
  });

  // SPEC.md: every response names the server. An onRequest hook runs for every
  // request, the 404 handler's and failed body parses included; Node's http
  // module adds Date itself.
  app.addHook('onRequest', async (req, reply) => {
    reply.header('server', 'fastify');
  });

  app.register(fastifyView, {
    engine: { ejs },
    root: path.join(__dirname, 'views'),
    production: true, // compile the template once, whatever NODE_ENV says
  });

  app.get('/plaintext', async (req, reply) => {
    reply.type('text/plain; charset=utf-8');
    return 'Hello, World!';
  });

  app.get('/json', { schema: { response: { 200: messageSchema } } }, async () => {
    return { message: 'Hello, World!' };
  });

  app.get('/file_read', { schema: { response: { 200: fileReadSchema } } }, async () => {
    const rows = await countRows();
    return { message: 'file_read', rows };
  });

  app.get('/wait_time', { schema: { response: { 200: messageSchema } } }, async () => {
    await sleep(1000);
    return { message: 'time_sleep' };
  });

  app.post('/test/simple', payloadRoute, async (req) => {
    return { payload: 'Hello, ' + req.body.payload };
  });

  app.post('/test/timed', payloadRoute, async (req) => {
    await sleep(20);
    return { payload: 'Hello, ' + req.body.payload };
  });

  app.post('/test/bcrypt', payloadRoute, async (req) => {
    const hash = await bcrypt.hash(req.body.payload, 10); // libuv's thread pool
    return { payload: hash };
  });

  // The database routes answer 503 when the server runs without a database.
  async function needsDatabase(req, reply) {
    if (pool === null) {
      reply.code(503).type('text/plain; charset=utf-8');
      return reply.send('no database configured (DATABASE_URL is not set)');
    }
  }

  const worldRoute = { preHandler: needsDatabase, schema: { response: { 200: worldSchema } } };
  const worldsRoute = { preHandler: needsDatabase, schema: { response: { 200: worldsSchema } } };

  app.get('/db', worldRoute, async () => {
    const { rows } = await pool.query(selectWorld(randomId()));
    return { id: rows[0].id, randomNumber: rows[0].randomnumber };
  });

  app.get('/queries', worldsRoute, async (req) => {
    const n = queryCount(req.query.queries);
    return withClient((client) => readWorlds(client, n));
  });

  app.get('/fortunes', { preHandler: needsDatabase }, async (req, reply) => {
    const { rows: fortunes } = await pool.query({ name: 'select-fortunes', text: SELECT_FORTUNES });
    fortunes.push({ id: 0, message: ADDITIONAL_FORTUNE });
    fortunes.sort((a, b) => compareCodePoints(a.message, b.message));
    reply.type('text/html; charset=utf-8');
    return reply.viewAsync('fortunes.ejs', { fortunes });
  });

  app.get('/updates', worldsRoute, async (req) => {
    const n = queryCount(req.query.queries);
    return withClient(async (client) => {
      const worlds = await readWorlds(client, n);
      // Each row gets a new random number. An id drawn twice is written once,
      // with the last number drawn for it, and every answered copy carries it.
      const final = new Map();
      for (const w of worlds) {
        w.randomNumber = randomId();
        final.set(w.id, w.randomNumber);
      }
      const ids = [...final.keys()].sort((a, b) => a - b); // one lock order: no deadlocks
      const numbers = ids.map((id) => final.get(id));
      await client.query({ name: 'update-worlds', text: UPDATE_WORLDS, values: [ids, numbers] });
      for (const w of worlds) w.randomNumber = final.get(w.id);
      return worlds;
    });
  });

  // SPEC.md "WebSocket", on the cleartext port only (wss:// is optional):
  // @fastify/websocket and a `websocket: true` route, as its README's Usage
  // shows (https://github.com/fastify/fastify-websocket#usage), every
  // message sent back with its type. Plugin and route sit in a context of
  // their own (Fastify's encapsulation), so the plugin's onRequest and
  // onResponse hooks and route wrapper run for /ws alone and the HTTP
  // routes stay as they were. ws's defaults stay (the plugin's `options`
  // are not set): maxPayload 100 MiB, pong for ping, close code echoed,
  // close 1002 for protocol errors, no permessage-deflate; the plugin's
  // default errorHandler terminates a socket after its 'error'.
  if (!serverOptions.http2) {
    app.register(async (scope) => {
      await scope.register(fastifyWebsocket);
      scope.get('/ws', { websocket: true }, (socket) => {
        socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
      });
    });
  }

  // Unknown paths get Fastify's own 404; a body that is not JSON or fails the
  // body schema gets its 400, quietly (the logger is off).

  return app;
}

// --- server -------------------------------------------------------------------

const app = buildApp({});
// SPEC.md "TLS": HTTP/2 with HTTP/1.1 beside it through ALPN on one port, as
// Fastify's HTTP2 reference shows (`http2: true`, `https: { allowHTTP1: true,
// key, cert }`, https://fastify.dev/docs/latest/Reference/HTTP2/), with the
// TLS options of ../node/tls.js.
const tls = tlsPort();
const tlsApp = tls && buildApp({ http2: true, https: { allowHTTP1: true, ...tls.options } });

const failed = (err) => {
  console.error(`node-fastify: ${err.message}`);
  process.exit(1);
};
app.listen({ port: Number(PORT), host: HOST }).then(
  () => startupLog(`node-fastify: listening on ${HOST}:${PORT}`),
  failed,
);
if (tlsApp) {
  tlsApp.listen({ port: tls.port, host: HOST }).then(
    () => startupLog(`node-fastify: TLS on ${HOST}:${tls.port}`),
    failed,
  );
}

// SIGTERM: stop accepting, close the pool, exit (at most 3 s later).
function shutdown() {
  const exit = () => process.exit(0);
  setTimeout(exit, 3000).unref();
  Promise.all([app.close(), tlsApp && tlsApp.close()])
    .then(() => (pool ? pool.end() : undefined))
    .then(exit, exit);
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
