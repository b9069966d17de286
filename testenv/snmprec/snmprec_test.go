package snmprec_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/toposcope/toposcope/testenv/snmprec"
)

func TestBits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want []byte
		ok   bool
	}{
		{"28 00 2 4", []byte{0x28, 0x00}, true},
		{"28 2 4", []byte{0x28}, true},
		{"20 00 2", []byte{0x20, 0x00}, true},
		{"30 30 2 3 10 11", []byte{0x30, 0x30}, true},
		{"36 38 20 31 20 32 20 34 2 3 5 6 10 11 12 18 26 27 31 34 42 43 46 50 58 59 61", []byte("68 1 2 4"), true},
		{"00", []byte{0}, true},
		{"28 00 2", nil, false}, // bit 4 is set but not listed
		{"router", nil, false},
		{"", nil, false},
	}
	for _, tt := range tests {
		got, ok := snmprec.Bits(tt.text)
		if ok != tt.ok || !bytes.Equal(got, tt.want) {
			t.Errorf("Bits(%q) = %x, %v; want %x, %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
}

func TestReadNamesTheLine(t *testing.T) {
	t.Parallel()
	_, err := snmprec.Read(strings.NewReader("1.3.6.1.2.1.1.5.0|4|sw1\n1.3.6.1.2.1.1.3.0|2|notanumber\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("Read = %v, want an error naming line 2", err)
	}
	recs, err := snmprec.Read(strings.NewReader("# c\n.1.3.6.1.2.1.1.5.0|4x|737731\n1.3.6.1.2.1.1.10|2|7\n1.3.6.1.2.1.1.9|2|1\n"))
	if err != nil {
		t.Fatal(err)
	}
	recs = snmprec.Sort(recs)
	if len(recs) != 3 || string(recs[0].Bytes) != "sw1" || recs[1].OID != "1.3.6.1.2.1.1.9" || recs[2].Int != 7 {
		t.Errorf("records = %+v", recs)
	}
}
