package config

import (
	"errors"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"
)

// typeErrors turns the decoder's messages ("line N: cannot unmarshal ...")
// into FieldErrors naming the key of that line (found in lines, the key
// paths relative to the parameters) under prefix; a message whose line
// starts no key is put on prefix at line, the parameters' own.
func typeErrors(te *yaml.TypeError, prefix string, line int, lines map[string]int) error {
	byLine := make(map[int]string, len(lines))
	for path, l := range lines {
		if cur, ok := byLine[l]; !ok || len(path) < len(cur) || len(path) == len(cur) && path < cur {
			byLine[l] = path // the key the line starts with, not an item of its flow list
		}
	}
	return typeFieldErrors(te, func(l int) (string, int) {
		if path, ok := byLine[l]; ok && l > 0 { // a value set on the command line or by a request has no line
			return join(prefix, path), l
		}
		return prefix, line
	})
}

// typeFieldErrors turns the messages of a *yaml.TypeError ("line N:
// cannot unmarshal ...") into FieldErrors; at gives the field and line of
// a message on line N (at(0) those of a message without a line).
func typeFieldErrors(te *yaml.TypeError, at func(line int) (field string, l int)) error {
	errs := make([]error, 0, len(te.Errors))
	for _, msg := range te.Errors {
		fe := &FieldError{Err: cleanYAMLError(errors.New(msg))}
		n := 0
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			n, _ = strconv.Atoi(m[1])
			fe.Err = errors.New(typeMessage(m[2]))
		}
		fe.Field, fe.Line = at(n)
		errs = append(errs, fe)
	}
	return errors.Join(errs...)
}

// flatten lists the errors joined in err (recursively, a *FieldError
// being one error even when it wraps a join); nil gives none.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if _, isField := err.(*FieldError); !isField { //nolint:errorlint // a join itself, not what it wraps
			var out []error
			for _, e := range j.Unwrap() {
				out = append(out, flatten(e)...)
			}
			return out
		}
	}
	return []error{err}
}

// MaxReported is how many problems Capped keeps: enough to fix a file in
// one round, few enough to read.
const MaxReported = 20

// MoreProblems is the last error Capped joins when it left problems out:
// it says how many, so that a caller counting problems can add them
// instead of counting this line as one.
type MoreProblems struct {
	// N is the number of problems left out.
	N int
}

// Error implements error: "and N more problems".
func (m *MoreProblems) Error() string { return fmt.Sprintf("and %d more problems", m.N) }

// Capped returns err with at most MaxReported of the errors joined in it
// (flattened), and a last *MoreProblems saying how many more there were.
func Capped(err error) error {
	list := flatten(err)
	if len(list) <= MaxReported {
		return err
	}
	out := append(list[:MaxReported:MaxReported], &MoreProblems{N: len(list) - MaxReported})
	return errors.Join(out...)
}
