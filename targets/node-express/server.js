'use strict';
// node-express implements the shootout API contract (see ../SPEC.md) with
// Express 5 on Node's own http server, one process per CPU through
// ../node/cluster.js: express.json() for the
// request bodies, res.json() for the answers, csv-parse's stream API for
// file_read, bcrypt's async API (hashed on libuv's thread pool, off the event
// loop) and, for the database routes, one pg Pool per process with its share
// of DB_POOL_SIZE connections, with named (prepared) statements. Fortunes render through EJS views with
// res.render, which HTML-escapes every <%= %>. The WebSocket echo at /ws is
// the ws package's WebSocketServer on the same http server (Express has no
// WebSocket of its own).

const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const path = require('node:path');
const { pipeline } = require('node:stream/promises');
const { setTimeout: sleep } = require('node:timers/promises');

const bcrypt = require('bcrypt');
const { parse } = require('csv-parse');
const express = require('express');
const pg = require('pg');
const { WebSocketServer } = require('ws');

const { tlsPort } = require('../node/tls.js');

// Startup lines come from the first worker of ../node/cluster.js only: the
// others start while the first already answers, and the same lines again
// would read as output during requests.
const cluster = require('node:cluster');
const startupLog = cluster.isWorker && cluster.worker.id !== 1 ? () => {} : (line) => console.error(line);

const PORT = process.env.PORT;
const HOST = process.env.HOST || '127.0.0.1';
if (!PORT) {
  console.error('node-express: the PORT environment variable is required');
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

// The payload string of a parsed {"payload": "<s>"} body, or undefined.
function payloadOf(body) {
  if (body === null || typeof body !== 'object' || typeof body.payload !== 'string') return undefined;
  return body.payload;
}

function badRequest(res) {
  res.status(400).type('text/plain').send('expected a JSON body {"payload": string}');
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
  pool.on('error', (err) => console.error(`node-express: idle database connection: ${err.message}`));
  startupLog(`node-express: database pool: at most ${pool.options.max} connections`);
} else {
  startupLog('node-express: DATABASE_URL is not set: the database routes answer 503');
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

// --- routes -------------------------------------------------------------------

const app = express();
app.disable('x-powered-by');
// SPEC.md: every response names the server, Express's own 404 and the error
// handler's answers included; Node's http module adds Date itself.
app.use((req, res, next) => {
  res.setHeader('Server', 'express');
  next();
});
app.set('views', path.join(__dirname, 'views'));
app.set('view engine', 'ejs');
app.set('view cache', true); // compile the template once, whatever NODE_ENV says

app.get('/plaintext', (req, res) => {
  res.type('text/plain').send('Hello, World!');
});

app.get('/json', (req, res) => {
  res.json({ message: 'Hello, World!' });
});

app.get('/file_read', async (req, res) => {
  const rows = await countRows();
  res.json({ message: 'file_read', rows });
});

app.get('/wait_time', async (req, res) => {
  await sleep(1000);
  res.json({ message: 'time_sleep' });
});

const jsonBody = express.json();

app.post('/test/simple', jsonBody, (req, res) => {
  const s = payloadOf(req.body);
  if (s === undefined) return badRequest(res);
  res.json({ payload: 'Hello, ' + s });
});

app.post('/test/timed', jsonBody, async (req, res) => {
  const s = payloadOf(req.body);
  if (s === undefined) return badRequest(res);
  await sleep(20);
  res.json({ payload: 'Hello, ' + s });
});

app.post('/test/bcrypt', jsonBody, async (req, res) => {
  const s = payloadOf(req.body);
  if (s === undefined) return badRequest(res);
  const hash = await bcrypt.hash(s, 10); // libuv's thread pool
  res.json({ payload: hash });
});

// The database routes answer 503 when the server runs without a database.
function needsDatabase(req, res, next) {
  if (pool === null) {
    res.status(503).type('text/plain').send('no database configured (DATABASE_URL is not set)');
    return;
  }
  next();
}

app.get('/db', needsDatabase, async (req, res) => {
  const { rows } = await pool.query(selectWorld(randomId()));
  res.json({ id: rows[0].id, randomNumber: rows[0].randomnumber });
});

app.get('/queries', needsDatabase, async (req, res) => {
  const n = queryCount(req.query.queries);
  res.json(await withClient((client) => readWorlds(client, n)));
});

app.get('/fortunes', needsDatabase, async (req, res) => {
  const { rows: fortunes } = await pool.query({ name: 'select-fortunes', text: SELECT_FORTUNES });
  fortunes.push({ id: 0, message: ADDITIONAL_FORTUNE });
  fortunes.sort((a, b) => compareCodePoints(a.message, b.message));
  res.type('text/html; charset=utf-8');
  res.render('fortunes', { fortunes });
});

app.get('/updates', needsDatabase, async (req, res) => {
  const n = queryCount(req.query.queries);
  const worlds = await withClient(async (client) => {
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
  res.json(worlds);
});

// Unknown paths fall through to Express's own 404. Errors (a body that is not
// JSON, a failed query) answer their status quietly: Express's default
// handler would print each one's stack, and nothing is logged per request.
app.use((err, req, res, next) => {
  if (res.headersSent) {
    req.socket.destroy();
    return;
  }
  const status = Number(err.status || err.statusCode);
  if (status >= 400 && status < 500) {
    res.status(status).type('text/plain').send(err.expose ? err.message : 'bad request');
  } else {
    res.status(500).type('text/plain').send('internal server error');
  }
});

// --- server -------------------------------------------------------------------

const server = http.createServer(app);

// SPEC.md "WebSocket": ws's WebSocketServer on the app's http server, as its
// README's "External HTTP/S server" example
// (https://github.com/websockets/ws/blob/8.23.0/README.md#external-https-server),
// answers upgrades to /ws (other upgrade paths get 400) in whichever worker
// the cluster handed the connection to. Every message goes back with its
// type. ws's defaults stay: maxPayload 100 MiB, pong for ping, close code
// echoed, close 1002 for protocol errors (1007 for invalid UTF-8), no
// permessage-deflate. A socket's 'error' (the protocol errors, after ws has
// sent its close frame) must have a listener, or the worker would crash.
const wss = new WebSocketServer({ server, path: '/ws' });
wss.on('connection', (ws) => {
  ws.on('error', () => {});
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});

server.listen(Number(PORT), HOST, () => {
  startupLog(`node-express: listening on ${HOST}:${PORT}`);
});

// SPEC.md "TLS": the same app on Node's https server, as Express's API docs
// show for HTTPS (app.listen, https://expressjs.com/en/5x/api.html#app.listen).
const tls = tlsPort();
const tlsServer = tls && https.createServer(tls.options, app);
if (tlsServer) {
  tlsServer.listen(tls.port, HOST, () => startupLog(`node-express: TLS on ${HOST}:${tls.port}`));
}

// SIGTERM: stop accepting, close the pool, exit (at most 3 s later).
function shutdown() {
  const exit = () => process.exit(0);
  setTimeout(exit, 3000).unref();
  server.close();
  if (tlsServer) tlsServer.close();
  (pool ? pool.end() : Promise.resolve()).then(exit, exit);
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
