package server

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/toposcope/toposcope/service/extender"
)

// The extender's answers repeat every node the scheduler passed: at
// 100,000 nodes a filter answer is a map of 100,000 names. encoding/json
// sorts a map's keys and reflects over each element; these encoders
// write the same JSON (same keys, same escaping) with the map keys in
// the order of the call's NodeNames, which costs one lookup per name.

// appendFilterResult appends r as JSON; names are the call's NodeNames,
// the order of the maps' keys (keys not among them follow, sorted).
func appendFilterResult(buf []byte, r *extender.FilterResult, names []string) []byte {
	start := len(buf)
	buf = append(buf, '{')
	first := true
	field := func(key string) {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(buf, '"')
		buf = append(buf, key...)
		buf = append(buf, `":`...)
	}
	if r.NodeNames != nil {
		field("NodeNames")
		buf = appendStrings(buf, *r.NodeNames)
	}
	if len(r.FailedNodes) > 0 {
		field("FailedNodes")
		buf = appendStringMap(buf, r.FailedNodes, names)
	}
	switch {
	case r.OthersUnresolvable != "" && len(r.FailedAndUnresolvableNodes) == 0:
		field("FailedAndUnresolvableNodes")
		buf = appendOthers(buf, names, r.Kept(), r.OthersUnresolvable)
	case r.OthersUnresolvable != "":
		c := *r
		c.FailedAndUnresolvableNodes = maps.Clone(r.FailedAndUnresolvableNodes)
		c.Expand(names)
		return appendFilterResult(buf[:start], &c, names)
	case len(r.FailedAndUnresolvableNodes) > 0:
		field("FailedAndUnresolvableNodes")
		buf = appendStringMap(buf, r.FailedAndUnresolvableNodes, names)
	}
	if r.Error != "" {
		field("Error")
		buf = appendJSONString(buf, r.Error)
	}
	return append(buf, '}')
}

// appendPriorities appends the prioritize answer as JSON.
func appendPriorities(buf []byte, hs []extender.HostPriority) []byte {
	if hs == nil {
		return append(buf, "null"...)
	}
	buf = append(buf, '[')
	for i := range hs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"Host":`...)
		buf = appendJSONString(buf, hs[i].Host)
		buf = append(buf, `,"Score":`...)
		buf = strconv.AppendInt(buf, hs[i].Score, 10)
		buf = append(buf, '}')
	}
	return append(buf, ']')
}

// appendStrings appends ss as a JSON array.
func appendStrings(buf []byte, ss []string) []byte {
	if ss == nil {
		return append(buf, "null"...)
	}
	buf = append(buf, '[')
	for i, s := range ss {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, s)
	}
	return append(buf, ']')
}

// appendOthers appends, as a JSON object, each of names that kept lacks
// with the reason. The names are a call's, which the extender has found
// free of repeats.
func appendOthers(buf []byte, names []string, kept map[string]struct{}, reason string) []byte {
	enc := appendJSONString(nil, reason)
	buf = append(buf, '{')
	first := true
	for _, n := range names {
		if _, ok := kept[n]; ok {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = appendJSONString(buf, n)
		buf = append(append(buf, ':'), enc...)
	}
	return append(buf, '}')
}

// appendStringMap appends m as a JSON object, its keys in the order of
// order and then the keys order lacks, sorted. Values repeat (one reason
// for most nodes): each distinct value in a row is escaped once.
func appendStringMap(buf []byte, m map[string]string, order []string) []byte {
	buf = append(buf, '{')
	n := 0
	var last string
	var lastEnc []byte
	put := func(k, v string) {
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
		buf = appendJSONString(buf, k)
		buf = append(buf, ':')
		if lastEnc == nil || v != last {
			last, lastEnc = v, appendJSONString(nil, v)
		}
		buf = append(buf, lastEnc...)
	}
	for _, k := range order {
		if v, ok := m[k]; ok {
			put(k, v)
		}
	}
	if n < len(m) {
		listed := make(map[string]struct{}, len(order))
		for _, k := range order {
			listed[k] = struct{}{}
		}
		var rest []string
		for k := range m {
			if _, ok := listed[k]; !ok {
				rest = append(rest, k)
			}
		}
		slices.Sort(rest)
		for _, k := range rest {
			put(k, m[k])
		}
	}
	return append(buf, '}')
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it (HTML characters included).
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			enc, err := json.Marshal(s)
			if err != nil { // unreachable: a string always encodes
				return append(buf, `""`...)
			}
			return append(buf, enc...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}
