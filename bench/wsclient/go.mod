module shootout/bench/wsclient

go 1.22

require (
	github.com/HdrHistogram/hdrhistogram-go v1.1.2
	github.com/gorilla/websocket v1.5.3
)
