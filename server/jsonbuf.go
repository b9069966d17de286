package server

import (
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// bufPool recycles the buffers of hand-encoded responses.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledBuf keeps one huge response from pinning its buffer.
const maxPooledBuf = 64 << 10

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > maxPooledBuf {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json does
// (control characters, quotes, backslashes, <, >, &, U+2028/9; invalid
// UTF-8 becomes U+FFFD).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// jsonObj appends the members of a JSON object one by one.
type jsonObj struct {
	b     []byte
	first bool
}

func (o *jsonObj) key(k string) {
	if !o.first {
		o.b = append(o.b, ',')
	}
	o.first = false
	o.b = appendString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *jsonObj) str(k, v string) {
	o.key(k)
	o.b = appendString(o.b, v)
}

func (o *jsonObj) optStr(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *jsonObj) int(k string, v int) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, int64(v), 10)
}

func (o *jsonObj) bool(k string, v bool) {
	o.key(k)
	o.b = strconv.AppendBool(o.b, v)
}

func (o *jsonObj) strMap(k string, m map[string]string) {
	o.key(k)
	keys := make([]string, 0, len(m))
	for mk := range m {
		keys = append(keys, mk)
	}
	slices.Sort(keys)
	inner := jsonObj{b: append(o.b, '{'), first: true}
	for _, mk := range keys {
		inner.str(mk, m[mk])
	}
	o.b = append(inner.b, '}')
}

func (o *jsonObj) open(k string) *jsonObj {
	o.key(k)
	return &jsonObj{b: append(o.b, '{'), first: true}
}

func (o *jsonObj) close(inner *jsonObj) {
	o.b = append(inner.b, '}')
}
