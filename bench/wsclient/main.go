// Command wsclient is an independent WebSocket echo benchmark client, the
// reference that the shootout engine's own WebSocket load is compared with
// (issue #48, item 6). It is written over gorilla/websocket, shares no code
// with the engine, and measures one thing: closed-loop echoes. Each of -c
// connections sends a random message of -size bytes, waits for its echo,
// checks it byte for byte, and repeats until -d ends. One JSON object goes to
// stdout; messages go to stderr.
//
// Bounds: the URL's host must be 127.0.0.1, localhost or [::1], the duration
// at most 60 s, and every read and write has a deadline, so a run always ends.
//
// Exit codes: 0 every echo checked and matched with no error, 1 the run ended
// with mismatches, errors or no echo at all (the JSON is still printed), 2 a
// usage error.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gorilla/websocket"
)

const (
	maxDuration   = 60 * time.Second
	maxConns      = 10000
	maxSize       = 1 << 20 // the contract's largest message (targets/SPEC.md "WebSocket")
	dialTimeout   = 5 * time.Second
	ioGrace       = 5 * time.Second // how long past -d an echo in flight may take
	closeWait     = time.Second     // how long to wait for the server's close reply
	histMaxMicros = 60_000_000      // the histogram's range: 1 us .. 60 s
	alphanumerics = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

type config struct {
	url      string
	conns    int
	duration time.Duration
	size     int
	binary   bool
}

type latency struct {
	P50 int64 `json:"p50"`
	P90 int64 `json:"p90"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

type report struct {
	URL            string  `json:"url"`
	Connections    int     `json:"connections"`
	Size           int     `json:"size"`
	Binary         bool    `json:"binary"`
	Messages       int64   `json:"messages"`
	Mismatches     int64   `json:"mismatches"`
	Errors         int64   `json:"errors"`
	Seconds        float64 `json:"seconds"`
	MessagesPerSec float64 `json:"messages_per_sec"`
	LatencyUs      latency `json:"latency_us"`
	CPUUserSeconds float64 `json:"cpu_user_seconds"`
	CPUSysSeconds  float64 `json:"cpu_sys_seconds"`
	CPUSeconds     float64 `json:"cpu_seconds"`
}

// result is what one connection measured.
type result struct {
	messages, mismatches, errors int64
	hist                         *hdrhistogram.Histogram
	firstErr                     error
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsclient:", err)
		os.Exit(2)
	}
	rep := run(cfg)
	out, err := json.Marshal(rep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsclient:", err)
		os.Exit(2)
	}
	fmt.Println(string(out))
	if rep.Messages == 0 || rep.Mismatches > 0 || rep.Errors > 0 {
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("wsclient", flag.ContinueOnError)
	var cfg config
	fs.StringVar(&cfg.url, "url", "", "ws://127.0.0.1:PORT/ws (host 127.0.0.1, localhost or [::1] only)")
	fs.IntVar(&cfg.conns, "c", 1, fmt.Sprintf("connections, 1..%d", maxConns))
	fs.DurationVar(&cfg.duration, "d", 5*time.Second, "duration, at most 60s")
	fs.IntVar(&cfg.size, "size", 64, fmt.Sprintf("message size in bytes, 1..%d", maxSize))
	fs.BoolVar(&cfg.binary, "binary", false, "send binary messages (default: text of ASCII letters and digits)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.url == "" {
		return cfg, errors.New("-url is required, e.g. -url ws://127.0.0.1:8080/ws")
	}
	u, err := url.Parse(cfg.url)
	if err != nil {
		return cfg, fmt.Errorf("-url %q: %w", cfg.url, err)
	}
	if u.Scheme != "ws" {
		return cfg, fmt.Errorf("-url %q: the scheme must be ws", cfg.url)
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
	default:
		return cfg, fmt.Errorf("-url %q: the host must be 127.0.0.1, localhost or [::1]", cfg.url)
	}
	if cfg.conns < 1 || cfg.conns > maxConns {
		return cfg, fmt.Errorf("-c %d: must be 1..%d", cfg.conns, maxConns)
	}
	if cfg.duration <= 0 || cfg.duration > maxDuration {
		return cfg, fmt.Errorf("-d %s: must be more than 0 and at most %s", cfg.duration, maxDuration)
	}
	if cfg.size < 1 || cfg.size > maxSize {
		return cfg, fmt.Errorf("-size %d: must be 1..%d", cfg.size, maxSize)
	}
	return cfg, nil
}

func run(cfg config) report {
	start := time.Now()
	end := start.Add(cfg.duration)
	results := make([]result, cfg.conns)
	var wg sync.WaitGroup
	for i := range cfg.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = connection(cfg, end, uint64(i))
		}()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()

	rep := report{URL: cfg.url, Connections: cfg.conns, Size: cfg.size, Binary: cfg.binary, Seconds: elapsed}
	hist := hdrhistogram.New(1, histMaxMicros, 3)
	reported := 0
	for _, r := range results {
		rep.Messages += r.messages
		rep.Mismatches += r.mismatches
		rep.Errors += r.errors
		hist.Merge(r.hist)
		if r.firstErr != nil && reported < 5 {
			fmt.Fprintln(os.Stderr, "wsclient:", r.firstErr)
			reported++
		}
	}
	if elapsed > 0 {
		rep.MessagesPerSec = float64(rep.Messages) / elapsed
	}
	rep.LatencyUs = latency{
		P50: hist.ValueAtQuantile(50),
		P90: hist.ValueAtQuantile(90),
		P99: hist.ValueAtQuantile(99),
		Max: hist.Max(),
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		rep.CPUUserSeconds = seconds(ru.Utime)
		rep.CPUSysSeconds = seconds(ru.Stime)
		rep.CPUSeconds = rep.CPUUserSeconds + rep.CPUSysSeconds
	}
	return rep
}

func seconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

// connection runs one closed loop until end: send, wait for the echo, check.
// An error ends the connection (counted once); it is not redialled.
func connection(cfg config, end time.Time, seed uint64) result {
	res := result{hist: hdrhistogram.New(1, histMaxMicros, 3)}
	fail := func(err error) result {
		res.errors++
		res.firstErr = err
		return res
	}
	dialer := websocket.Dialer{
		HandshakeTimeout: dialTimeout,
		ReadBufferSize:   min(max(4096, cfg.size+14), 64<<10),
		// One frame per message: gorilla cuts a message into frames of its write buffer.
		WriteBufferSize: max(4096, cfg.size+14),
	}
	// No Origin header and no subprotocol: what the shootout load sends.
	conn, _, err := dialer.Dial(cfg.url, nil)
	if err != nil {
		return fail(fmt.Errorf("dial %s: %w", cfg.url, err))
	}
	defer conn.Close()
	// An echo larger than sent is read (and counted a mismatch) up to twice the size.
	conn.SetReadLimit(int64(2*cfg.size + 1024))
	deadline := end.Add(ioGrace)
	_ = conn.SetReadDeadline(deadline)
	_ = conn.SetWriteDeadline(deadline)

	msgType := websocket.TextMessage
	if cfg.binary {
		msgType = websocket.BinaryMessage
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), seed))
	sent := make([]byte, cfg.size)
	var got bytes.Buffer
	got.Grow(cfg.size)

	for time.Now().Before(end) {
		fill(rng, sent, cfg.binary)
		t0 := time.Now()
		if err := conn.WriteMessage(msgType, sent); err != nil {
			return fail(fmt.Errorf("write: %w", err))
		}
		typ, r, err := conn.NextReader()
		if err != nil {
			return fail(fmt.Errorf("read: %w", err))
		}
		got.Reset()
		if _, err := got.ReadFrom(r); err != nil {
			return fail(fmt.Errorf("read: %w", err))
		}
		us := time.Since(t0).Microseconds()
		res.messages++
		_ = res.hist.RecordValue(min(max(us, 1), histMaxMicros))
		if typ != msgType || !bytes.Equal(got.Bytes(), sent) {
			res.mismatches++
		}
	}

	// A clean close: send 1000, then wait briefly for the server's close.
	_ = conn.SetWriteDeadline(time.Now().Add(closeWait))
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
	if err := conn.WriteMessage(websocket.CloseMessage, msg); err == nil {
		_ = conn.SetReadDeadline(time.Now().Add(closeWait))
		for {
			if _, _, err := conn.NextReader(); err != nil {
				break
			}
		}
	}
	return res
}

// fill writes random bytes into buf: any byte for binary, ASCII letters and
// digits for text (valid UTF-8 whatever the size).
func fill(rng *rand.Rand, buf []byte, binary bool) {
	for i := 0; i < len(buf); i += 8 {
		x := rng.Uint64()
		for j := i; j < len(buf) && j < i+8; j++ {
			b := byte(x)
			if !binary {
				b = alphanumerics[b%byte(len(alphanumerics))]
			}
			buf[j] = b
			x >>= 8
		}
	}
}
