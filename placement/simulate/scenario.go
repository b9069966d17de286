package simulate

import (
	"embed"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/placement"
)

// ErrScenarioFile is wrapped by every error of LoadScenario and
// ParseScenario.
var ErrScenarioFile = errors.New("invalid scenario file")

//go:embed scenarios/*.yaml
var scenarioFS embed.FS

// Scenario is a named simulation: a model, the budget tree of its
// accounts and the synthetic work each account submits. The bundled ones
// are listed by Scenarios; a YAML file of the same shape is read as well.
type Scenario struct {
	// Name names the scenario.
	Name string `yaml:"name"`
	// Description says what it models.
	Description string `yaml:"description"`
	// Model is the simulation model (a bundled model name or a file).
	Model string `yaml:"model"`
	// Days is how long jobs arrive.
	Days float64 `yaml:"days"`
	// Load is the offered load as a fraction of the model's GPUs.
	Load float64 `yaml:"load"`
	// MaxGPUs caps a job's GPUs (SyntheticOptions.MaxGPUs; 0: its default).
	MaxGPUs int `yaml:"maxGPUs"`
	// MeanDurationSeconds is SyntheticOptions.MeanDuration (0: its default).
	MeanDurationSeconds float64 `yaml:"meanDurationSeconds"`
	// DebugShare is the share of jobs that are debug work
	// (SyntheticOptions.DebugShare; default 0).
	DebugShare float64 `yaml:"debugShare"`
	// Order is the queue order (OrderSubmit or OrderFairShare; default
	// OrderFairShare).
	Order string `yaml:"order"`
	// Accounts are the first-tier accounts.
	Accounts []ScenarioAccount `yaml:"accounts"`
}

// ScenarioAccount is one account of a Scenario.
type ScenarioAccount struct {
	// Name is the account.
	Name string `yaml:"name"`
	// Shares is its budget weight.
	Shares float64 `yaml:"shares"`
	// Demand is the GPU-time it submits as a multiple of its share (its
	// shares over all shares, of the cluster); the multiples are scaled
	// together so that the whole is Load.
	Demand float64 `yaml:"demand"`
}

// Scenarios lists the bundled scenarios' names.
func Scenarios() []string {
	entries, _ := scenarioFS.ReadDir("scenarios") // the embedded directory always exists
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return names
}

// LoadScenario reads a bundled scenario by name, or else a scenario file.
// Errors name the key and its line and wrap ErrScenarioFile.
func LoadScenario(nameOrPath string) (*Scenario, error) {
	data, err := scenarioFS.ReadFile(path.Join("scenarios", nameOrPath+".yaml"))
	if err != nil {
		if data, err = os.ReadFile(nameOrPath); err != nil {
			return nil, fmt.Errorf("%w: %q is neither a bundled scenario (%s) nor a file: %w",
				ErrScenarioFile, nameOrPath, strings.Join(Scenarios(), ", "), err)
		}
	}
	return ParseScenario(data)
}

// ParseScenario strictly decodes a scenario YAML document.
func ParseScenario(data []byte) (*Scenario, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrScenarioFile, err)
	}
	var root *yaml.Node
	if len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	s := &Scenario{}
	if err := config.Decode(root, s, "scenario"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrScenarioFile, err)
	}
	if s.Order == "" {
		s.Order = OrderFairShare
	}
	return s, nil
}

// Validate reports every missing or out-of-range field.
func (s *Scenario) Validate() error {
	var errs []error
	if s.Name == "" {
		errs = append(errs, config.Errorf("name", "must not be empty"))
	}
	if s.Model == "" {
		errs = append(errs, config.Errorf("model", "must name a model"))
	}
	if !(s.Days > 0 && s.Days <= 366) {
		errs = append(errs, config.Errorf("days", "must be more than 0 and at most 366"))
	}
	if !(s.Load > 0 && s.Load <= 10) {
		errs = append(errs, config.Errorf("load", "must be more than 0 and at most 10"))
	}
	if s.MaxGPUs < 0 {
		errs = append(errs, config.Errorf("maxGPUs", "must not be negative"))
	}
	if !(s.MeanDurationSeconds >= 0 && s.MeanDurationSeconds <= 7*24*3600) {
		errs = append(errs, config.Errorf("meanDurationSeconds", "must be 0 (the default) to a week"))
	}
	if !(s.DebugShare >= 0 && s.DebugShare < 1) {
		errs = append(errs, config.Errorf("debugShare", "must be at least 0 and below 1"))
	}
	if s.Order != "" && s.Order != OrderSubmit && s.Order != OrderFairShare {
		errs = append(errs, config.Errorf("order", "want %s or %s", OrderSubmit, OrderFairShare))
	}
	if len(s.Accounts) == 0 {
		errs = append(errs, config.Errorf("accounts", "must list at least one account"))
	}
	seen := map[string]bool{}
	for i, a := range s.Accounts {
		field := fmt.Sprintf("accounts[%d]", i)
		switch {
		case a.Name == "":
			errs = append(errs, config.Errorf(field+".name", "must not be empty"))
		case seen[a.Name]:
			errs = append(errs, config.Errorf(field+".name", "duplicate account %q", a.Name))
		}
		seen[a.Name] = true
		if !(a.Shares > 0) || math.IsInf(a.Shares, 1) {
			errs = append(errs, config.Errorf(field+".shares", "must be positive"))
		}
		if !(a.Demand > 0) || math.IsInf(a.Demand, 1) {
			errs = append(errs, config.Errorf(field+".demand", "must be positive"))
		}
	}
	return errors.Join(errs...)
}

// Budgets returns the scenario's budget tree: one first-tier account
// per scenario account with its shares.
func (s *Scenario) Budgets() *placement.Budgets {
	b := &placement.Budgets{Accounts: make([]placement.AccountSpec, len(s.Accounts))}
	for i, a := range s.Accounts {
		b.Accounts[i] = placement.AccountSpec{Name: a.Name, Shares: &a.Shares}
	}
	return b
}

// Synthetic returns the options of the scenario's trace for seed on a
// cluster of capacityGPUs: jobs arrive for Days at Load, each account's
// with a chance proportional to its shares times its demand.
func (s *Scenario) Synthetic(seed uint64, capacityGPUs int) SyntheticOptions {
	mix := make([]AccountWeight, len(s.Accounts))
	for i, a := range s.Accounts {
		mix[i] = AccountWeight{Account: a.Name, Weight: a.Shares * a.Demand}
	}
	return SyntheticOptions{
		Seed: seed, Horizon: s.Days * 24 * 3600, Mix: slices.Clip(mix),
		MaxGPUs: s.MaxGPUs, MeanDuration: s.MeanDurationSeconds,
		Load: s.Load, CapacityGPUs: capacityGPUs, DebugShare: s.DebugShare,
	}
}
