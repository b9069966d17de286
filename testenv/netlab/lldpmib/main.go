// Command lldpmib serves the LLDP-MIB to a real snmpd through its
// pass_persist protocol, for the network lab's switches: from the
// switch namespace's own lldpd (its lldpcli's view of its ports and
// neighbors, as lldpLocalSystemData, lldpRemTable and
// lldpRemManAddrTable), or from a saved walk (.snmprec). Debian's lldpd is
// built without AgentX, so this is what stands in for a switch's own SNMP
// agent; snmpd, the protocol and the client are the real ones.
//
//	pass_persist .1.0.8802.1.1.2 /path/lldpmib -socket /tmp/lab/sw.ctl
//	pass_persist .1.0.8802.1.1.2 /path/lldpmib -snmprec saved.snmprec
//
// -delay makes every answer slow (a switch whose agent is overloaded).
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/toposcope/toposcope/testenv/snmprec"
)

func main() {
	socket := flag.String("socket", "", "lldpd control socket of the switch")
	file := flag.String("snmprec", "", "saved walk to serve instead")
	delay := flag.Duration("delay", 0, "wait before each answer")
	flag.Parse()
	src := &source{socket: *socket, file: *file}
	if err := serve(os.Stdin, os.Stdout, src, *delay); err != nil {
		log.Fatal(err)
	}
}

// source is the table served, read again when older than a second.
type source struct {
	socket, file string
	recs         []snmprec.Record
	arcs         [][]uint32
	read         time.Time
}

func (s *source) table() ([]snmprec.Record, [][]uint32) {
	if s.recs != nil && (s.file != "" || time.Since(s.read) < time.Second) {
		return s.recs, s.arcs
	}
	var recs []snmprec.Record
	var err error
	if s.file != "" {
		var f *os.File
		if f, err = os.Open(s.file); err == nil {
			recs, err = snmprec.Read(f)
			_ = f.Close()
		}
	} else {
		recs, err = fromLLDPD(context.Background(), s.socket)
	}
	if err != nil {
		log.Printf("lldpmib: %v", err) // snmpd logs the helper's stderr
		return s.recs, s.arcs
	}
	s.recs, s.read = snmprec.Sort(recs), time.Now()
	s.arcs = make([][]uint32, len(s.recs))
	for i, r := range s.recs {
		s.arcs[i], _ = snmprec.Split(r.OID)
	}
	return s.recs, s.arcs
}

// serve answers snmpd's pass_persist requests until stdin closes.
func serve(in io.Reader, out io.Writer, src *source, delay time.Duration) error {
	r := bufio.NewReader(in)
	w := bufio.NewWriter(out)
	line := func() (string, error) {
		l, err := r.ReadString('\n')
		return strings.TrimSpace(l), err
	}
	for {
		cmd, err := line()
		if err != nil {
			return nil // snmpd closed the pipe
		}
		time.Sleep(delay)
		switch cmd {
		case "PING":
			fmt.Fprintln(w, "PONG")
		case "get", "getnext":
			oid, err := line()
			if err != nil {
				return nil
			}
			answer(w, src, cmd == "getnext", oid)
		case "set":
			_, _ = line()
			_, _ = line()
			fmt.Fprintln(w, "not-writable")
		default:
			fmt.Fprintln(w, "NONE")
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

// answer writes the variable at oid (get) or the first after it
// (getnext), or NONE.
func answer(w io.Writer, src *source, next bool, oid string) {
	recs, arcs := src.table()
	want, err := snmprec.Split(oid)
	if err != nil {
		fmt.Fprintln(w, "NONE")
		return
	}
	i, found := slices.BinarySearchFunc(arcs, want, slices.Compare)
	if next && found {
		i++
	}
	if i >= len(recs) || (!next && !found) {
		fmt.Fprintln(w, "NONE")
		return
	}
	rec := recs[i]
	typ, val := "integer", fmt.Sprint(rec.Int)
	switch rec.Tag {
	case snmprec.TagOctets:
		typ, val = "octet", spacedHex(rec.Bytes)
	case snmprec.TagIPAddress:
		typ, val = "ipaddress", fmt.Sprintf("%d.%d.%d.%d", at(rec.Bytes, 0), at(rec.Bytes, 1), at(rec.Bytes, 2), at(rec.Bytes, 3))
	case snmprec.TagOID:
		typ, val = "objectid", "."+rec.Text
	case snmprec.TagCounter32:
		typ = "counter"
	case snmprec.TagGauge32:
		typ = "gauge"
	case snmprec.TagTimeTicks:
		typ = "timeticks"
	case snmprec.TagCounter64:
		typ = "counter64"
	}
	fmt.Fprintf(w, ".%s\n%s\n%s\n", rec.OID, typ, val)
}

func spacedHex(b []byte) string {
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = hex.EncodeToString([]byte{c})
	}
	return strings.Join(parts, " ")
}

func at(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 0
}

// lldpcli runs the switch's lldpcli with args.
func lldpcli(ctx context.Context, socket string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/usr/sbin/lldpcli", append([]string{"-u", socket, "-f", "json0"}, args...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("lldpcli %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}
