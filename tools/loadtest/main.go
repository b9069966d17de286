// Command loadtest drives a running `toposcope serve` from a second
// process over loopback: keep-alive HTTP/1.1 connections, each sending one
// request at a time, with a deliberately small client (raw TCP, no
// net/http) so that the generator takes little of the CPU it shares with
// the server. It prints requests per second, latency percentiles, bytes
// per response and, with -pid, the server's resident memory.
//
//	go run ./tools/loadtest -url http://127.0.0.1:49321 -mode node -nodes 100000 -c 16 -d 20s -pid PID
//	go run ./tools/loadtest -url http://127.0.0.1:49321 -mode graph -c 2 -d 20s -pid PID
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

type options struct {
	base     *url.URL
	mode     string
	nodes    int
	prefix   string
	width    int
	conns    int
	duration time.Duration
	token    string
	pid      int
}

func main() {
	var o options
	var raw string
	flag.StringVar(&raw, "url", "http://127.0.0.1:49021", "service base URL (http only)")
	flag.StringVar(&o.mode, "mode", "node", "node (GET /v1/nodes/{random node}) or graph (GET /v1/graph)")
	flag.IntVar(&o.nodes, "nodes", 100000, "node mode: number of nodes to pick from")
	flag.StringVar(&o.prefix, "prefix", "gpu", "node mode: node name prefix")
	flag.IntVar(&o.width, "width", 0, "node mode: digits of the node number (0: those of -nodes)")
	flag.IntVar(&o.conns, "c", 16, "connections")
	flag.DurationVar(&o.duration, "d", 20*time.Second, "duration")
	flag.StringVar(&o.token, "token", "", "bearer token")
	flag.IntVar(&o.pid, "pid", 0, "server process ID, to report its memory")
	flag.Parse()
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		fmt.Fprintln(os.Stderr, "loadtest: -url must be an http:// URL")
		os.Exit(2)
	}
	o.base = u
	if o.width == 0 {
		o.width = len(strconv.Itoa(o.nodes))
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

type result struct {
	lat   []time.Duration
	bytes int64
	err   error
}

func run(o options) error {
	deadline := time.Now().Add(o.duration)
	results := make([]result, o.conns)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range o.conns {
		wg.Go(func() { results[i] = worker(o, uint64(i), deadline) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	var bytesTotal int64
	for _, r := range results {
		if r.err != nil {
			return r.err
		}
		all = append(all, r.lat...)
		bytesTotal += r.bytes
	}
	if len(all) == 0 {
		return errors.New("no request completed")
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration { return all[min(len(all)-1, int(p*float64(len(all))))] }
	fmt.Printf("mode=%s conns=%d duration=%s requests=%d\n", o.mode, o.conns, elapsed.Round(time.Millisecond), len(all))
	fmt.Printf("throughput: %.0f req/s, %.1f MB/s, %d bytes/response\n",
		float64(len(all))/elapsed.Seconds(), float64(bytesTotal)/elapsed.Seconds()/1e6, bytesTotal/int64(len(all)))
	fmt.Printf("latency: p50=%s p90=%s p99=%s p99.9=%s max=%s\n", pct(.5), pct(.9), pct(.99), pct(.999), all[len(all)-1])
	if o.pid > 0 {
		rss, hwm, err := memory(o.pid)
		if err != nil {
			return err
		}
		fmt.Printf("server memory: VmRSS=%d MiB VmHWM=%d MiB\n", rss>>10, hwm>>10)
	}
	return nil
}

func worker(o options, seed uint64, deadline time.Time) result {
	conn, err := net.Dial("tcp", o.base.Host)
	if err != nil {
		return result{err: err}
	}
	defer func() { _ = conn.Close() }()
	rng := rand.New(rand.NewPCG(seed, 42))
	br := bufio.NewReaderSize(conn, 64<<10)
	res := result{lat: make([]time.Duration, 0, 1<<16)}
	var req []byte
	for time.Now().Before(deadline) {
		path := "/v1/graph"
		if o.mode == "node" {
			path = fmt.Sprintf("/v1/nodes/%s%0*d", o.prefix, o.width, 1+rng.IntN(o.nodes))
		}
		req = append(req[:0], "GET "+path+" HTTP/1.1\r\nHost: "+o.base.Host+"\r\n"...)
		if o.token != "" {
			req = append(req, "Authorization: Bearer "+o.token+"\r\n"...)
		}
		req = append(req, "\r\n"...)
		t0 := time.Now()
		if _, err := conn.Write(req); err != nil {
			return result{err: err}
		}
		n, status, err := readResponse(br)
		if err != nil {
			return result{err: fmt.Errorf("GET %s: %w", path, err)}
		}
		if status != 200 {
			return result{err: fmt.Errorf("GET %s: status %d", path, status)}
		}
		res.lat = append(res.lat, time.Since(t0))
		res.bytes += n
	}
	return res
}

// readResponse reads one response, discarding the body, and returns the
// body length and status.
func readResponse(br *bufio.Reader) (int64, int, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, 0, err
	}
	if len(line) < 12 {
		return 0, 0, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, 0, fmt.Errorf("bad status line %q", line)
	}
	length, chunked := int64(-1), false
	for {
		h, err := br.ReadSlice('\n')
		if err != nil {
			return 0, 0, err
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		k, v, _ := bytes.Cut(h, []byte(":"))
		switch strings.ToLower(string(k)) {
		case "content-length":
			length, _ = strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		case "transfer-encoding":
			chunked = bytes.Contains(v, []byte("chunked"))
		}
	}
	if !chunked {
		if length < 0 {
			return 0, status, errors.New("no Content-Length")
		}
		_, err := br.Discard(int(length))
		return length, status, err
	}
	var total int64
	for {
		h, err := br.ReadSlice('\n')
		if err != nil {
			return 0, 0, err
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(h)), 16, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("bad chunk size %q", h)
		}
		if size == 0 {
			_, err = br.ReadSlice('\n') // the blank line after the last chunk
			return total, status, err
		}
		if _, err := io.CopyN(io.Discard, br, size+2); err != nil {
			return 0, 0, err
		}
		total += size
	}
}

// memory returns VmRSS and VmHWM of pid in KiB.
func memory(pid int) (rss, hwm int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			rss = v
		case "VmHWM:":
			hwm = v
		}
	}
	return rss, hwm, nil
}
