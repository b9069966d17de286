package engines

import (
	"fmt"

	"github.com/toposcope/toposcope/internal/atomicfile"
)

// WriteDocument delivers the document of an engine whose output is a
// file: to output, replaced atomically (an unchanged file is not
// rewritten; changed says whether it was), or to deps.Stdout when output
// is empty. Errors name the engine; on error the old file stays.
func WriteDocument(engine, output string, data []byte, deps Deps) (changed bool, err error) {
	if output == "" {
		if _, err := deps.Stdout.Write(data); err != nil {
			return false, fmt.Errorf("%s: write: %w", engine, err)
		}
		return true, nil
	}
	if changed, err = atomicfile.Write(output, data, 0o644); err != nil {
		return false, fmt.Errorf("%s: %w", engine, err)
	}
	return changed, nil
}
