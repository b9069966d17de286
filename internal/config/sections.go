package config

import (
	"errors"
	"reflect"

	"gopkg.in/yaml.v3"
)

// sectionLines maps each service section ("server", ...) to the lines of
// its keys, by key path relative to the section.
type sectionLines map[string]map[string]int

// serviceSections lists the service sections and their types.
func serviceSections(f *File) []struct {
	key string
	cfg Validator
} {
	return []struct {
		key string
		cfg Validator
	}{{"server", &f.Server}, {"discovery", &f.Discovery}, {"store", &f.Store}, {"kubernetes", &f.Kubernetes}, {"placement", &f.Placement}}
}

// checkSections strictly checks the top-level keys and the keys of the
// service sections of data,
// so that an unknown key is reported with its full path and line, and
// records the line of every key. A document that does not parse is left
// for the typed decoder to report.
func checkSections(data []byte) (sectionLines, error) {
	out := sectionLines{}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return out, nil //nolint:nilerr // reported by the typed decoder
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return out, nil
	}
	var errs []error
	top := yamlFields(reflect.TypeFor[File]())
	for i := 0; i+1 < len(root.Content); i += 2 {
		if key := root.Content[i]; top[key.Value] == nil {
			errs = append(errs, unknownKey(key.Value, key, top))
		}
	}
	for _, s := range serviceSections(&File{}) {
		lines := map[string]int{}
		out[s.key] = lines
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value != s.key {
				continue
			}
			val := root.Content[i+1]
			if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
				continue
			}
			if val.Kind != yaml.MappingNode {
				errs = append(errs, &FieldError{Field: s.key, Line: val.Line, Err: errors.New("must be a mapping")})
				continue
			}
			if err := checkKeys(val, reflect.TypeOf(s.cfg), s.key, "", lines); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return out, errors.Join(errs...)
}

// validateSections validates every service section, and the rules across
// sections, naming each key with its section and line.
func (f *File) validateSections(lines sectionLines) error {
	var errs []error
	for _, s := range serviceSections(f) {
		errs = append(errs, prefixErrors(s.cfg.Validate(), s.key, lines[s.key]))
	}
	// Across sections: the extender's client names are read from
	// certificates that only server.tls.clientCA verifies.
	if ext := f.Placement.Extender; ext.Enabled && len(ext.Clients) > 0 && f.Server.TLS.ClientCA == "" {
		errs = append(errs, prefixErrors(Errorf("extender.clients", "name client certificates, which need server.tls.clientCA to be verified"), "placement", lines["placement"]))
	}
	return errors.Join(errs...)
}
