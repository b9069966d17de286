package lldp_test

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/toposcope/toposcope/providers/lldp"
)

// fatTreeFixtures holds what the lab's real tools said (written with
// -update): each cluster host's `lldpcli -f json0 show neighbors`, and
// each switch's LLDP-MIB as the real snmpd served it, walked with
// gosnmp, in snmpsim's .snmprec format.
var fatTreeFixtures = filepath.Join("testdata", "fattree")

// save writes the fixtures.
func (l *lab) save(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(fatTreeFixtures, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range clusterHosts {
		out, err := l.LLDPCLI(t.Context(), h, "-f", "json0", "show", "neighbors")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fatTreeFixtures, h+".json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, sw := range fatTree.switches {
		c := &gosnmp.GoSNMP{Target: l.mgmt[sw].String(), Port: 161, Transport: "udp", Community: community, Version: gosnmp.Version2c, Timeout: 2 * time.Second, Retries: 1, MaxOids: gosnmp.MaxOids}
		if err := c.Connect(); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, root := range []string{lldp.OIDLocal, lldp.OIDRemote} {
			err := c.BulkWalk(root, func(pdu gosnmp.SnmpPDU) error {
				oid := strings.TrimPrefix(pdu.Name, ".")
				switch v := pdu.Value.(type) {
				case []byte:
					fmt.Fprintf(&b, "%s|4x|%s\n", oid, hex.EncodeToString(v))
				default:
					fmt.Fprintf(&b, "%s|2|%d\n", oid, gosnmp.ToBigInt(v).Int64())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		_ = c.Conn.Close()
		if err := os.WriteFile(filepath.Join(fatTreeFixtures, sw+".snmprec"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
