// Command go-nethttp implements the shootout API contract (see ../SPEC.md)
// with the Go standard library's net/http server and ServeMux, encoding/json,
// encoding/csv, html/template, golang.org/x/crypto/bcrypt, for the
// database routes github.com/jackc/pgx/v5/pgxpool and, for the WebSocket
// echo at /ws, github.com/gorilla/websocket (net/http has no WebSocket).
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"
)

type message struct {
	Message string `json:"message"`
}

type fileRead struct {
	Message string `json:"message"`
	Rows    int    `json:"rows"`
}

type payload struct {
	Payload *string `json:"payload"`
}

type reply struct {
	Payload string `json:"payload"`
}

// csvPath is $DATA_DIR/titanic.csv, or ../data/titanic.csv relative to the folder.
func csvPath() string {
	dir := os.Getenv("DATA_DIR")
	if dir == "" {
		dir = filepath.Join("..", "data")
	}
	return filepath.Join(dir, "titanic.csv")
}

func countRows() (int, error) {
	f, err := os.Open(csvPath())
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = true
	if _, err := r.Read(); err != nil { // header
		return 0, err
	}
	rows := 0
	for {
		_, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return 0, err
		}
		rows++
	}
}

// writeJSON marshals v compactly (no trailing newline) and writes it.
func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// readPayload decodes {"payload":"<s>"}; it answers 400 and returns false
// if the body is not JSON or lacks a string payload.
func readPayload(w http.ResponseWriter, r *http.Request) (string, bool) {
	var p payload
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(body, &p)
	}
	if err != nil || p.Payload == nil {
		http.Error(w, "expected a JSON body {\"payload\": string}", http.StatusBadRequest)
		return "", false
	}
	return *p.Payload, true
}

func plaintext(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, "Hello, World!")
}

func jsonHandler(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, message{Message: "Hello, World!"})
}

func fileReadHandler(w http.ResponseWriter, r *http.Request) {
	rows, err := countRows()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, fileRead{Message: "file_read", Rows: rows})
}

func waitTime(w http.ResponseWriter, r *http.Request) {
	time.Sleep(time.Second)
	writeJSON(w, message{Message: "time_sleep"})
}

func simple(w http.ResponseWriter, r *http.Request) {
	if s, ok := readPayload(w, r); ok {
		writeJSON(w, reply{Payload: "Hello, " + s})
	}
}

func timed(w http.ResponseWriter, r *http.Request) {
	if s, ok := readPayload(w, r); ok {
		time.Sleep(20 * time.Millisecond)
		writeJSON(w, reply{Payload: "Hello, " + s})
	}
}

func bcryptHandler(w http.ResponseWriter, r *http.Request) {
	s, ok := readPayload(w, r)
	if !ok {
		return
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(s), 10)
	if err != nil {
		// bcrypt rejects passwords longer than 72 bytes.
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	writeJSON(w, reply{Payload: string(hash)})
}

// upgrader holds gorilla/websocket's defaults: no message size limit (the
// Conn's read limit is unset until SetReadLimit), same-origin check,
// no compression, the library's ping, close and protocol-error handlers
// (https://pkg.go.dev/github.com/gorilla/websocket).
var upgrader = websocket.Upgrader{}

// wsEcho sends every message back unchanged, with its type, as
// gorilla/websocket's echo example does
// (https://github.com/gorilla/websocket/blob/v1.5.3/examples/echo/server.go),
// without its logging. Pings are answered with pongs, a close with the
// same close code, and a protocol error with close 1002, by the library.
func wsEcho(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has already answered with an HTTP error
	}
	defer c.Close()
	for {
		mt, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(mt, msg); err != nil {
			return
		}
	}
}

// db is the connection pool, or nil when DATABASE_URL is not set.
var db *pgxpool.Pool

type world struct {
	ID           int32 `json:"id"`
	RandomNumber int32 `json:"randomNumber"`
}

type fortune struct {
	ID      int32
	Message string
}

const (
	worldRows         = 10000
	selectWorld       = "SELECT id, randomnumber FROM world WHERE id = $1"
	selectFortunes    = "SELECT id, message FROM fortune"
	updateWorlds      = "UPDATE world SET randomnumber = v.r FROM unnest($1::int[], $2::int[]) AS v(id, r) WHERE world.id = v.id"
	defaultPoolSize   = 4
	additionalFortune = "Additional fortune added at request time."
)

var fortunesTemplate = template.Must(template.New("fortunes").Parse(
	`<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>` +
		`{{range .}}<tr><td>{{.ID}}</td><td>{{.Message}}</td></tr>{{end}}` +
		`</table></body></html>`))

// openPool builds a pool of at most DB_POOL_SIZE (default 4) connections.
// pgx connects lazily, so the server starts even if the database is down.
func openPool(url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	size := defaultPoolSize
	if s := os.Getenv("DB_POOL_SIZE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, errors.New("DB_POOL_SIZE must be a positive integer")
		}
		size = n
	}
	cfg.MaxConns = int32(size)
	cfg.MinConns = 0
	return pgxpool.NewWithConfig(context.Background(), cfg)
}

// withDB answers 503 when the server runs without a database.
func withDB(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if db == nil {
			http.Error(w, "no database configured (DATABASE_URL is not set)", http.StatusServiceUnavailable)
			return
		}
		h(w, r)
	}
}

func dbError(w http.ResponseWriter, err error) {
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

func randomID() int32 {
	return int32(rand.IntN(worldRows) + 1)
}

// queryCount reads ?queries=Q: clamped to 1..500, and 1 when missing, empty
// or not an integer.
func queryCount(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("queries"))
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 1
	}
	return max(1, min(n, 500))
}

// readWorlds reads n rows with independent random ids, one query per row.
func readWorlds(ctx context.Context, conn *pgxpool.Conn, n int) ([]world, error) {
	rows := make([]world, n)
	for i := range rows {
		if err := conn.QueryRow(ctx, selectWorld, randomID()).Scan(&rows[i].ID, &rows[i].RandomNumber); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func dbHandler(w http.ResponseWriter, r *http.Request) {
	var row world
	if err := db.QueryRow(r.Context(), selectWorld, randomID()).Scan(&row.ID, &row.RandomNumber); err != nil {
		dbError(w, err)
		return
	}
	writeJSON(w, row)
}

func queriesHandler(w http.ResponseWriter, r *http.Request) {
	n := queryCount(r)
	conn, err := db.Acquire(r.Context())
	if err != nil {
		dbError(w, err)
		return
	}
	rows, err := readWorlds(r.Context(), conn, n)
	conn.Release()
	if err != nil {
		dbError(w, err)
		return
	}
	writeJSON(w, rows)
}

func fortunesHandler(w http.ResponseWriter, r *http.Request) {
	rows, _ := db.Query(r.Context(), selectFortunes)
	fortunes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[fortune])
	if err != nil {
		dbError(w, err)
		return
	}
	fortunes = append(fortunes, fortune{ID: 0, Message: additionalFortune})
	slices.SortFunc(fortunes, func(a, b fortune) int { return strings.Compare(a.Message, b.Message) })
	var buf bytes.Buffer
	if err := fortunesTemplate.Execute(&buf, fortunes); err != nil {
		dbError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Write(buf.Bytes())
}

func updatesHandler(w http.ResponseWriter, r *http.Request) {
	n := queryCount(r)
	ctx := r.Context()
	conn, err := db.Acquire(ctx)
	if err != nil {
		dbError(w, err)
		return
	}
	defer conn.Release()
	rows, err := readWorlds(ctx, conn, n)
	if err != nil {
		dbError(w, err)
		return
	}
	// Each row gets a new random number. An id drawn twice is written once,
	// with the last number drawn for it, and every answered copy carries it.
	final := make(map[int32]int32, n)
	for i := range rows {
		rows[i].RandomNumber = randomID()
		final[rows[i].ID] = rows[i].RandomNumber
	}
	ids := make([]int32, 0, len(final))
	for id := range final {
		ids = append(ids, id)
	}
	slices.Sort(ids) // one lock order for all requests: no deadlocks
	numbers := make([]int32, len(ids))
	for i, id := range ids {
		numbers[i] = final[id]
	}
	if _, err := conn.Exec(ctx, updateWorlds, ids, numbers); err != nil {
		dbError(w, err)
		return
	}
	for i := range rows {
		rows[i].RandomNumber = final[rows[i].ID]
	}
	writeJSON(w, rows)
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("go-nethttp: ")
	port := os.Getenv("PORT")
	if port == "" {
		log.Fatal("the PORT environment variable is required")
	}
	host := os.Getenv("HOST")
	if host == "" {
		host = "127.0.0.1"
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /plaintext", plaintext)
	mux.HandleFunc("GET /json", jsonHandler)
	mux.HandleFunc("GET /file_read", fileReadHandler)
	mux.HandleFunc("GET /wait_time", waitTime)
	mux.HandleFunc("POST /test/simple", simple)
	mux.HandleFunc("POST /test/timed", timed)
	mux.HandleFunc("POST /test/bcrypt", bcryptHandler)
	mux.HandleFunc("GET /ws", wsEcho)
	mux.HandleFunc("GET /db", withDB(dbHandler))
	mux.HandleFunc("GET /queries", withDB(queriesHandler))
	mux.HandleFunc("GET /fortunes", withDB(fortunesHandler))
	mux.HandleFunc("GET /updates", withDB(updatesHandler))

	if url := os.Getenv("DATABASE_URL"); url != "" {
		pool, err := openPool(url)
		if err != nil {
			log.Fatalf("database: %v", err)
		}
		db = pool
		log.Printf("database pool: at most %d connections", pool.Config().MaxConns)
	} else {
		log.Printf("DATABASE_URL is not set: the database routes answer 503")
	}

	handler := withServerHeader(mux)
	if srv := tlsServer(host, handler); srv != nil {
		go func() {
			log.Fatal(srv.ListenAndServeTLS(os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY")))
		}()
		log.Printf("TLS on %s", srv.Addr)
	}
	addr := net.JoinHostPort(host, port)
	log.Printf("listening on %s", addr)
	log.Fatal(http.ListenAndServe(addr, handler))
}

// tlsServer is the second listener of SPEC.md "TLS", or nil when TLS_PORT,
// TLS_CERT and TLS_KEY are not all set. ListenAndServeTLS offers h2 and
// http/1.1 through ALPN by itself (net/http package docs, "HTTP/2",
// https://pkg.go.dev/net/http); TLS_CLIENT_CA turns on
// tls.RequireAndVerifyClientCert (crypto/tls, ClientAuthType,
// https://pkg.go.dev/crypto/tls#ClientAuthType).
func tlsServer(host string, handler http.Handler) *http.Server {
	port, cert, key := os.Getenv("TLS_PORT"), os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY")
	if port == "" || cert == "" || key == "" {
		return nil
	}
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile := os.Getenv("TLS_CLIENT_CA"); caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			log.Fatalf("TLS_CLIENT_CA: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			log.Fatalf("TLS_CLIENT_CA: no certificate in %s", caFile)
		}
		config.ClientCAs = pool
		config.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return &http.Server{Addr: net.JoinHostPort(host, port), Handler: handler, TLSConfig: config}
}

// withServerHeader wraps the whole mux, so every response (the mux's own
// 404 and 405 included) names the server as SPEC.md asks; net/http adds
// Date itself.
func withServerHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "go-nethttp")
		next.ServeHTTP(w, r)
	})
}
