// Command go-nethttp implements the shootout API contract (see ../SPEC.md)
// with the Go standard library's net/http server and ServeMux, encoding/json,
// encoding/csv and golang.org/x/crypto/bcrypt.
package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

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

	addr := net.JoinHostPort(host, port)
	log.Printf("listening on %s", addr)
	log.Fatal(http.ListenAndServe(addr, mux))
}
