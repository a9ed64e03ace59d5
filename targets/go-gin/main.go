// Command go-gin implements the shootout API contract (see ../SPEC.md) with
// the Gin web framework in release mode: gin.New() with only the Recovery
// middleware (nothing is logged per request), c.JSON for JSON answers,
// ShouldBindJSON for request bodies, Gin's HTML rendering with an
// html/template for fortunes, encoding/csv, golang.org/x/crypto/bcrypt,
// for the database routes github.com/jackc/pgx/v5/pgxpool and, for the
// WebSocket echo at /ws, github.com/gorilla/websocket as Gin's docs show.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"errors"
	"html/template"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
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

// payloadRequest is the body of POST /test/*. Payload is a pointer so that
// "required" rejects a missing payload but accepts an empty string.
type payloadRequest struct {
	Payload *string `json:"payload" binding:"required"`
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

// countRows opens and parses the CSV file on every call and counts its data
// rows (the header excluded).
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

// bindPayload decodes {"payload":"<s>"}; it answers 400 and returns false
// if the body is not JSON or lacks a string payload.
func bindPayload(c *gin.Context) (string, bool) {
	var req payloadRequest
	if err := c.ShouldBindJSON(&req); err != nil {
		c.String(http.StatusBadRequest, "expected a JSON body {\"payload\": string}")
		return "", false
	}
	return *req.Payload, true
}

func plaintext(c *gin.Context) {
	c.String(http.StatusOK, "Hello, World!")
}

func jsonHandler(c *gin.Context) {
	c.JSON(http.StatusOK, message{Message: "Hello, World!"})
}

func fileReadHandler(c *gin.Context) {
	rows, err := countRows()
	if err != nil {
		c.String(http.StatusInternalServerError, err.Error())
		return
	}
	c.JSON(http.StatusOK, fileRead{Message: "file_read", Rows: rows})
}

// waitTime sleeps in its own goroutine (net/http runs one per connection),
// so other requests go on meanwhile.
func waitTime(c *gin.Context) {
	time.Sleep(time.Second)
	c.JSON(http.StatusOK, message{Message: "time_sleep"})
}

func simple(c *gin.Context) {
	if s, ok := bindPayload(c); ok {
		c.JSON(http.StatusOK, reply{Payload: "Hello, " + s})
	}
}

func timed(c *gin.Context) {
	if s, ok := bindPayload(c); ok {
		time.Sleep(20 * time.Millisecond)
		c.JSON(http.StatusOK, reply{Payload: "Hello, " + s})
	}
}

// bcryptHandler hashes in the request's goroutine: Go has no event loop to
// block, and the runtime spreads goroutines over all CPUs.
func bcryptHandler(c *gin.Context) {
	s, ok := bindPayload(c)
	if !ok {
		return
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(s), 10)
	if err != nil {
		// bcrypt rejects passwords longer than 72 bytes.
		c.String(http.StatusBadRequest, err.Error())
		return
	}
	c.JSON(http.StatusOK, reply{Payload: string(hash)})
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

// fortunesTemplate is an html/template, so Gin's HTML rendering escapes the
// messages.
var fortunesTemplate = template.Must(template.New("fortunes.html").Parse(
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

// requireDB answers 503 when the server runs without a database.
func requireDB(c *gin.Context) {
	if db == nil {
		c.String(http.StatusServiceUnavailable, "no database configured (DATABASE_URL is not set)")
		c.Abort()
		return
	}
	c.Next()
}

func dbError(c *gin.Context, err error) {
	c.String(http.StatusInternalServerError, err.Error())
}

func randomID() int32 {
	return int32(rand.IntN(worldRows) + 1)
}

// queryCount reads ?queries=Q: clamped to 1..500, and 1 when missing, empty
// or not an integer.
func queryCount(c *gin.Context) int {
	n, err := strconv.Atoi(c.Query("queries"))
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

func dbHandler(c *gin.Context) {
	var row world
	if err := db.QueryRow(c.Request.Context(), selectWorld, randomID()).Scan(&row.ID, &row.RandomNumber); err != nil {
		dbError(c, err)
		return
	}
	c.JSON(http.StatusOK, row)
}

func queriesHandler(c *gin.Context) {
	n := queryCount(c)
	ctx := c.Request.Context()
	conn, err := db.Acquire(ctx)
	if err != nil {
		dbError(c, err)
		return
	}
	rows, err := readWorlds(ctx, conn, n)
	conn.Release()
	if err != nil {
		dbError(c, err)
		return
	}
	c.JSON(http.StatusOK, rows)
}

func fortunesHandler(c *gin.Context) {
	rows, _ := db.Query(c.Request.Context(), selectFortunes)
	fortunes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[fortune])
	if err != nil {
		dbError(c, err)
		return
	}
	fortunes = append(fortunes, fortune{ID: 0, Message: additionalFortune})
	// strings.Compare orders by bytes, which for UTF-8 is code point order.
	slices.SortFunc(fortunes, func(a, b fortune) int { return strings.Compare(a.Message, b.Message) })
	c.HTML(http.StatusOK, "fortunes.html", fortunes)
}

func updatesHandler(c *gin.Context) {
	n := queryCount(c)
	ctx := c.Request.Context()
	conn, err := db.Acquire(ctx)
	if err != nil {
		dbError(c, err)
		return
	}
	defer conn.Release()
	rows, err := readWorlds(ctx, conn, n)
	if err != nil {
		dbError(c, err)
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
		dbError(c, err)
		return
	}
	for i := range rows {
		rows[i].RandomNumber = final[rows[i].ID]
	}
	c.JSON(http.StatusOK, rows)
}

// upgrader holds gorilla/websocket's defaults: no message size limit (the
// Conn's read limit is unset until SetReadLimit), same-origin check (Gin's
// page allows every origin "for development"; the default stays), no
// compression, the library's ping, close and protocol-error handlers.
var upgrader = websocket.Upgrader{}

// wsEcho is the basic echo server of Gin's docs (Server configuration,
// WebSocket Support, https://gin-gonic.com/en/docs/server-config/websocket):
// upgrade c.Writer and c.Request with gorilla/websocket and send every
// message back with its type, without the per-message logging. Pings are
// answered with pongs, a close with the same close code, and a protocol
// error with close 1002, by the library.
func wsEcho(c *gin.Context) {
	conn, err := upgrader.Upgrade(c.Writer, c.Request, nil)
	if err != nil {
		return // Upgrade has already answered with an HTTP error
	}
	defer conn.Close()
	for {
		mt, msg, err := conn.ReadMessage()
		if err != nil {
			return
		}
		if err := conn.WriteMessage(mt, msg); err != nil {
			return
		}
	}
}

// newRouter builds the Gin engine: release mode, no Logger middleware.
// serverHeader names the server on every response.
func serverHeader(c *gin.Context) {
	c.Header("Server", "go-gin")
}

func newRouter() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	// SPEC.md: any other path answers 404, /plaintext/ included.
	r.RedirectTrailingSlash = false
	// SPEC.md: Server on every response, 404s included (engine-wide
	// middleware also runs for NoRoute); net/http adds Date itself.
	r.Use(serverHeader, gin.Recovery())
	// No reverse proxy sits in front: take the client IP from the connection.
	if err := r.SetTrustedProxies(nil); err != nil {
		log.Fatal(err)
	}
	r.SetHTMLTemplate(fortunesTemplate)

	r.GET("/plaintext", plaintext)
	r.GET("/json", jsonHandler)
	r.GET("/file_read", fileReadHandler)
	r.GET("/wait_time", waitTime)
	r.GET("/ws", wsEcho)

	test := r.Group("/test")
	test.POST("/simple", simple)
	test.POST("/timed", timed)
	test.POST("/bcrypt", bcryptHandler)

	database := r.Group("/", requireDB)
	database.GET("/db", dbHandler)
	database.GET("/queries", queriesHandler)
	database.GET("/fortunes", fortunesHandler)
	database.GET("/updates", updatesHandler)
	return r
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("go-gin: ")
	port := os.Getenv("PORT")
	if port == "" {
		log.Fatal("the PORT environment variable is required")
	}
	host := os.Getenv("HOST")
	if host == "" {
		host = "127.0.0.1"
	}

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

	addr := net.JoinHostPort(host, port)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	handler := newRouter().Handler()
	srv := &http.Server{Handler: handler}
	tlsSrv := tlsServer(host, handler)

	// Graceful shutdown as in Gin's docs: SIGTERM (or SIGINT) stops
	// accepting, then waits a little for requests in flight.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Printf("listening on %s", addr)
	if tlsSrv != nil {
		go func() { served <- tlsSrv.ListenAndServeTLS(os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY")) }()
		log.Printf("TLS on %s", tlsSrv.Addr)
	}

	select {
	case err := <-served:
		log.Fatal(err)
	case <-ctx.Done():
	}
	stop()
	log.Printf("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if tlsSrv != nil {
		go tlsSrv.Shutdown(shutdownCtx) // in step with the cleartext one
	}
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// Requests still running: leave without waiting for the pool.
		log.Printf("shutdown: %v", err)
		os.Exit(1)
	}
	if db != nil {
		db.Close()
	}
}

// tlsServer is the second listener of SPEC.md "TLS", or nil when TLS_PORT,
// TLS_CERT and TLS_KEY are not all set: a second http.Server on the same
// Gin handler, as Gin's docs do for custom server settings ("Custom HTTP
// configuration", https://gin-gonic.com/en/docs/examples/custom-http-config/),
// started with ListenAndServeTLS (what Gin's RunTLS calls), which offers h2
// and http/1.1 through ALPN by itself (net/http package docs, "HTTP/2",
// https://pkg.go.dev/net/http). TLS_CLIENT_CA turns on
// tls.RequireAndVerifyClientCert (https://pkg.go.dev/crypto/tls#ClientAuthType).
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
