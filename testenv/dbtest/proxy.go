package dbtest

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a database server and can cut the
// network between its clients and the server: Cut closes the server's
// side of every connection (the server frees what the connection held,
// as once its keepalives find a peer gone) and leaves the clients' side
// open and silent, as a broken network does; connections made during
// the cut hang the same way. Heal ends the silent ones and forwards
// again.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]net.Conn // client side -> server side (nil while cut)
}

// NewProxy listens on a loopback port and forwards to the server; it
// stops with the test.
func NewProxy(t testing.TB, s *Server) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: fmt.Sprintf("127.0.0.1:%d", s.port), conns: map[net.Conn]net.Conn{}}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// DSN is the server's DSN through the proxy.
func (p *Proxy) DSN(s *Server) string {
	return strings.Replace(s.DSN(), fmt.Sprintf("127.0.0.1:%d", s.port), p.ln.Addr().String(), 1)
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.conns[c] = nil // held open and silent
			p.mu.Unlock()
			continue
		}
		p.mu.Unlock()
		srv, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c] = srv
		p.mu.Unlock()
		go p.pipe(c, srv)
	}
}

// pipe copies both ways until either side ends; while the network is
// cut, the client side is left open.
func (p *Proxy) pipe(c, srv net.Conn) {
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(srv, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, srv); done <- struct{}{} }()
	<-done
	_ = srv.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cut {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// Cut breaks the network: see Proxy.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c, srv := range p.conns {
		if srv != nil {
			_ = srv.Close()
			p.conns[c] = nil
		}
	}
}

// Heal ends the connections the cut left hanging and forwards new ones.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	for c, srv := range p.conns {
		if srv == nil {
			_ = c.Close()
			delete(p.conns, c)
		}
	}
}

func (p *Proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, srv := range p.conns {
		_ = c.Close()
		if srv != nil {
			_ = srv.Close()
		}
	}
}
