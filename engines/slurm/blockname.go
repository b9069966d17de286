package slurm

import (
	"fmt"
	"regexp"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/internal/config"
)

// BlockName names blocks after their nodes (Topograph's blockName): each
// node's name is matched by NodeNameRegexp (RE2, not anchored) and
// Format is expanded with its submatches ($1, ${1}, ${name}); every node
// of a block must give the same name, and two blocks never the same
// one. A node that does not match, an empty name, a block whose nodes
// disagree, or two blocks of one name fail the output naming them: a
// block keeps no default name silently. Padding blocks, which hold no
// node, keep theirs.
type BlockName struct {
	// NodeNameRegexp matches a node's name.
	NodeNameRegexp string `yaml:"nodeNameRegexp"`
	// Format is the block's name, with the match's submatches expanded.
	Format string `yaml:"format"`
}

// validate reports its invalid fields under prefix.
func (b *BlockName) validate(prefix string) []error {
	var errs []error
	if b.NodeNameRegexp == "" {
		errs = append(errs, config.Errorf(prefix+".nodeNameRegexp", "must not be empty"))
	} else if _, err := regexp.Compile(b.NodeNameRegexp); err != nil {
		errs = append(errs, config.Errorf(prefix+".nodeNameRegexp", "%q: %v", b.NodeNameRegexp, err))
	}
	if b.Format == "" {
		errs = append(errs, config.Errorf(prefix+".format", "must not be empty"))
	}
	return errs
}

// rename gives p's blocks their names from b (nil: unchanged).
func (b *BlockName) rename(p *blockPlan, what string) error {
	if b == nil {
		return nil
	}
	re, err := regexp.Compile(b.NodeNameRegexp)
	if err != nil {
		return fmt.Errorf("%s: blockName.nodeNameRegexp: %w", what, err) // validated; kept for safety
	}
	names := make([]string, len(p.slots))
	owner := map[string]string{} // name → the block (default name) that has it
	for i := range p.slots {
		s := &p.slots[i]
		names[i] = s.name
		for j, node := range s.nodes {
			m := re.FindStringSubmatchIndex(node)
			if m == nil {
				return fmt.Errorf("%s: node %q of block %q does not match blockName.nodeNameRegexp %q: %w", what, node, s.name, b.NodeNameRegexp, engines.ErrInexpressible)
			}
			name := string(re.ExpandString(nil, b.Format, node, m))
			switch {
			case name == "":
				return fmt.Errorf("%s: blockName.format %q gives an empty name for node %q of block %q: %w", what, b.Format, node, s.name, engines.ErrInexpressible)
			case j == 0:
				names[i] = name
			case name != names[i]:
				return fmt.Errorf("%s: the nodes of block %q give different blockName names, %q (%s) and %q (%s): %w", what, s.name, names[i], s.nodes[0], name, node, engines.ErrInexpressible)
			}
		}
	}
	for i := range p.slots {
		if other, dup := owner[names[i]]; dup {
			return fmt.Errorf("%s: blocks %q and %q both get the blockName name %q: %w", what, other, p.slots[i].name, names[i], engines.ErrInexpressible)
		}
		owner[names[i]] = p.slots[i].name
	}
	for i := range p.slots {
		p.slots[i].name = names[i]
	}
	return nil
}
