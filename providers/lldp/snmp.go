package lldp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/gosnmp/gosnmp"
)

// ErrSNMP is wrapped when a switch's SNMP agent does not answer, or
// answers with an error.
var ErrSNMP = errors.New("SNMP")

// Walker walks one subtree of a switch's MIB: the provider's narrow view
// of an SNMP client.
type Walker interface {
	// Walk calls fn with each variable under root on the agent at
	// host:port, in order.
	Walk(ctx context.Context, host string, port int, root string, fn func(Var) error) error
}

var authProtocols = map[string]gosnmp.SnmpV3AuthProtocol{
	"MD5": gosnmp.MD5, "SHA": gosnmp.SHA, "SHA224": gosnmp.SHA224, "SHA256": gosnmp.SHA256,
	"SHA384": gosnmp.SHA384, "SHA512": gosnmp.SHA512,
}

var privProtocols = map[string]gosnmp.SnmpV3PrivProtocol{
	"DES": gosnmp.DES, "AES": gosnmp.AES, "AES192": gosnmp.AES192, "AES256": gosnmp.AES256,
}

// snmpWalker is Walker over gosnmp, with the credentials read once.
type snmpWalker struct {
	s         SNMP
	community string
	flags     gosnmp.SnmpV3MsgFlags
	usm       *gosnmp.UsmSecurityParameters
}

// newSNMPWalker reads the credential files of s (defaulted) and returns
// the walker. Errors name the file, never its content.
func newSNMPWalker(s SNMP) (*snmpWalker, error) {
	w := &snmpWalker{s: s}
	if s.Version == Version2c {
		community, err := secret(s.CommunityFile)
		if err != nil {
			return nil, fmt.Errorf("snmp communityFile: %w", err)
		}
		w.community = community
		return w, nil
	}
	usm := &gosnmp.UsmSecurityParameters{UserName: s.User, AuthenticationProtocol: gosnmp.NoAuth, PrivacyProtocol: gosnmp.NoPriv}
	flags := gosnmp.NoAuthNoPriv
	if s.AuthPassphraseFile != "" {
		pass, err := secret(s.AuthPassphraseFile)
		if err != nil {
			return nil, fmt.Errorf("snmp authPassphraseFile: %w", err)
		}
		usm.AuthenticationProtocol, usm.AuthenticationPassphrase = authProtocols[strings.ToUpper(orDefault(s.AuthProtocol, "SHA"))], pass
		flags = gosnmp.AuthNoPriv
	}
	if s.PrivPassphraseFile != "" {
		pass, err := secret(s.PrivPassphraseFile)
		if err != nil {
			return nil, fmt.Errorf("snmp privPassphraseFile: %w", err)
		}
		usm.PrivacyProtocol, usm.PrivacyPassphrase = privProtocols[strings.ToUpper(orDefault(s.PrivProtocol, "AES"))], pass
		flags = gosnmp.AuthPriv
	}
	w.flags, w.usm = flags, usm
	return w, nil
}

// Walk implements Walker with a GETBULK walk (SNMPv2c and v3).
func (w *snmpWalker) Walk(ctx context.Context, host string, port int, root string, fn func(Var) error) error {
	// A client per walk: gosnmp's is not safe for concurrent use.
	c := &gosnmp.GoSNMP{
		Target: host, Port: uint16(port), Context: ctx, Transport: "udp",
		Timeout: w.s.Timeout, Retries: w.s.Retries, MaxOids: gosnmp.MaxOids, MaxRepetitions: 25,
		Version: gosnmp.Version2c, Community: w.community,
	}
	if w.usm != nil {
		c.Version, c.SecurityModel, c.MsgFlags, c.SecurityParameters = gosnmp.Version3, gosnmp.UserSecurityModel, w.flags, w.usm.Copy()
	}
	if err := c.Connect(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrSNMP, net.JoinHostPort(host, strconv.Itoa(port)), err)
	}
	defer func() { _ = c.Conn.Close() }()
	err := c.BulkWalk(root, func(pdu gosnmp.SnmpPDU) error {
		v := Var{OID: strings.TrimPrefix(pdu.Name, ".")}
		switch x := pdu.Value.(type) {
		case []byte:
			v.Bytes = x
		case string:
			v.Bytes = []byte(x)
		default:
			v.Int = gosnmp.ToBigInt(pdu.Value).Int64()
		}
		return fn(v)
	})
	if err != nil {
		return fmt.Errorf("%w: %s: walk %s: %w", ErrSNMP, net.JoinHostPort(host, strconv.Itoa(port)), root, err)
	}
	return nil
}

// splitAddress reads "host" or "host:port" (an IPv6 host in brackets
// with a port), giving port def when there is none.
func splitAddress(a string, def int) (string, int, error) {
	if a == "" {
		return "", 0, errors.New("empty address")
	}
	host, p, err := net.SplitHostPort(a)
	if err != nil {
		if strings.Count(a, ":") == 1 {
			return "", 0, fmt.Errorf("address %q: %w", a, err)
		}
		return strings.Trim(a, "[]"), def, nil // no port (or a bare IPv6 address)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 || host == "" {
		return "", 0, fmt.Errorf("address %q: bad host or port", a)
	}
	return host, port, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
