// Package snmprec reads SNMP walks saved in snmpsim's .snmprec format
// (one `OID|TYPE|VALUE` per line, TYPE an ASN.1 tag number with an `x`
// suffix when VALUE is hex), the format device recordings are kept in,
// and orders OIDs as an agent walks them.
package snmprec

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ASN.1 tags of the types a record holds.
const (
	TagInteger   = 2
	TagOctets    = 4
	TagNull      = 5
	TagOID       = 6
	TagIPAddress = 64
	TagCounter32 = 65
	TagGauge32   = 66
	TagTimeTicks = 67
	TagCounter64 = 70
)

// Record is one variable.
type Record struct {
	// OID is dotted, without a leading dot.
	OID string
	// Tag is the value's ASN.1 type.
	Tag int
	// Bytes is an octet string's (or an IP address's) value; Int an
	// integer's; Text an OID's.
	Bytes []byte
	Int   int64
	Text  string
}

// Read reads every record; a line that is not one is an error naming it.
// Blank lines and lines starting with # are skipped.
func Read(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" || text[0] == '#' {
			continue
		}
		rec, err := parse(text)
		if err != nil {
			return nil, fmt.Errorf("snmprec line %d: %w", line, err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("snmprec: %w", err)
	}
	return out, nil
}

func parse(line string) (Record, error) {
	oid, rest, ok1 := strings.Cut(line, "|")
	typ, value, ok2 := strings.Cut(rest, "|")
	if !ok1 || !ok2 {
		return Record{}, fmt.Errorf("want OID|TYPE|VALUE, got %q", line)
	}
	oid = strings.TrimPrefix(oid, ".")
	if _, err := Split(oid); err != nil {
		return Record{}, err
	}
	hexed := strings.HasSuffix(typ, "x")
	tag, err := strconv.Atoi(strings.TrimSuffix(typ, "x"))
	if err != nil {
		return Record{}, fmt.Errorf("type %q", typ)
	}
	rec := Record{OID: oid, Tag: tag}
	switch tag {
	case TagOctets, TagIPAddress:
		rec.Bytes = []byte(value)
		if hexed {
			if rec.Bytes, err = hex.DecodeString(value); err != nil {
				return Record{}, fmt.Errorf("hex value of %s: %w", oid, err)
			}
		}
		if tag == TagIPAddress && !hexed {
			rec.Bytes = ipv4(value)
		}
	case TagOID:
		rec.Text = strings.TrimPrefix(value, ".")
	case TagNull:
	default:
		if rec.Int, err = strconv.ParseInt(value, 10, 64); err != nil {
			u, uerr := strconv.ParseUint(value, 10, 64)
			if uerr != nil {
				return Record{}, fmt.Errorf("integer value of %s: %q", oid, value)
			}
			rec.Int = int64(u)
		}
	}
	return rec, nil
}

func ipv4(s string) []byte {
	var b []byte
	for _, p := range strings.Split(s, ".") {
		v, err := strconv.ParseUint(p, 10, 8)
		if err != nil {
			return []byte(s)
		}
		b = append(b, byte(v))
	}
	return b
}

// Split reads a dotted OID into its arcs.
func Split(oid string) ([]uint32, error) {
	parts := strings.Split(strings.TrimPrefix(oid, "."), ".")
	out := make([]uint32, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("OID %q: arc %q", oid, p)
		}
		out[i] = uint32(v)
	}
	return out, nil
}

// Sort orders records as an agent walks them (arc by arc), dropping
// later duplicates of an OID.
func Sort(recs []Record) []Record {
	arcs := make(map[string][]uint32, len(recs))
	for _, r := range recs {
		arcs[r.OID], _ = Split(r.OID)
	}
	slices.SortStableFunc(recs, func(a, b Record) int { return slices.Compare(arcs[a.OID], arcs[b.OID]) })
	return slices.CompactFunc(recs, func(a, b Record) bool { return a.OID == b.OID })
}

// Bits reads a BITS value kept as net-snmp displays it, the octets in
// hex and then the numbers of the bits set ("28 00 2 4"), as recordings
// made from snmpwalk's output keep it. The numbers must be the bits the
// octets set; ok is false for any other text.
func Bits(text string) (octets []byte, ok bool) {
	fields := strings.Fields(text)
	for n := len(fields); n > 0; n-- {
		b, err := hex.DecodeString(strings.Join(fields[:n], ""))
		if err != nil || len(b) != n {
			continue
		}
		var want []string
		for i := range 8 * len(b) {
			if b[i/8]&(0x80>>(i%8)) != 0 {
				want = append(want, strconv.Itoa(i))
			}
		}
		if slices.Equal(fields[n:], want) {
			return b, true
		}
	}
	return nil, false
}
