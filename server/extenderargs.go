package server

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/toposcope/toposcope/service/extender"
)

// A filter or prioritize call at 100,000 nodes is a 1.3 MB body whose
// bulk is NodeNames. encoding/json scans such a body twice and makes one
// string per name; decodeArgs reads the names straight from the JSON
// text into one string that they all share, and decodes the rest of the
// object (the pod) as decodeStrict does. Anything it does not expect
// (a syntax error, a name that is not a plain string, invalid UTF-8)
// goes to decodeStrict, whose error the client gets: the answers are
// those of decodeStrict either way.

// decodeArgs decodes an extender call into a.
func decodeArgs(raw []byte, a *extender.Args) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return decodeStrict(raw, a)
	}
	if err := checkKeys(raw, a, ""); err != nil {
		return err
	}
	rest, names, ok := splitNames(raw)
	if !ok {
		return decodeStrict(raw, a)
	}
	if err := decodeStrict(rest, a); err != nil {
		return err
	}
	a.NodeNames = names
	return nil
}

// splitNames returns raw's object without its NodeNames member, and that
// member's names (nil when it is absent or null); false when raw is not
// one object whose NodeNames is null or an array of strings.
func splitNames(raw []byte) (rest []byte, names *[]string, ok bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil, false
	}
	rest = append(make([]byte, 0, 1024), '{')
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, nil, false
		}
		key := tok.String()
		if key == "NodeNames" {
			if names, ok = readNames(dec, len(raw)); !ok {
				return nil, nil, false
			}
			continue
		}
		val, err := dec.ReadValue()
		if err != nil {
			return nil, nil, false
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		if rest, err = jsontext.AppendQuote(rest, key); err != nil {
			return nil, nil, false
		}
		rest = append(append(rest, ':'), val...)
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, nil, false
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, nil, false // trailing data: decodeStrict says so
	}
	return append(rest, '}'), names, true
}

// readNames reads the JSON array of strings next in dec into strings
// that share one backing string (size is a bound on their bytes); nil
// for null; false for anything else.
func readNames(dec *jsontext.Decoder, size int) (*[]string, bool) {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		return nil, err == nil
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, false
	}
	var text strings.Builder
	text.Grow(size)
	ends := make([]int32, 0, size/16)
	var scratch []byte
	for dec.PeekKind() == '"' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, false
		}
		if v.Kind() == '"' && bytes.IndexByte(v, '\\') < 0 {
			text.Write(v[1 : len(v)-1]) // valid UTF-8, no escape: the text itself
		} else if scratch, err = jsontext.AppendUnquote(scratch[:0], v); err == nil {
			text.Write(scratch)
		} else {
			return nil, false
		}
		ends = append(ends, int32(text.Len()))
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != ']' {
		return nil, false // an element that is not a string
	}
	all := text.String()
	names := make([]string, len(ends))
	start := int32(0)
	for i, end := range ends {
		names[i] = all[start:end]
		start = end
	}
	return &names, true
}
