package service_test

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/toposcope/toposcope/app"
	slinkyengine "github.com/toposcope/toposcope/engines/slinky"
	"github.com/toposcope/toposcope/internal/config"
	"github.com/toposcope/toposcope/service"
)

// operatorPlugin builds a configured plugin from its params in YAML.
func operatorPlugin(t *testing.T, name, params string) config.Plugin {
	t.Helper()
	p := config.Plugin{Name: name}
	if params != "" {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(params), &doc); err != nil {
			t.Fatal(err)
		}
		p.Params = *doc.Content[0]
	}
	return p
}

// compatRequests is a Requests whose operator configured the provider
// and engines given (name: params in YAML).
func compatRequests(t *testing.T, provider config.Plugin, engines ...config.Plugin) *service.Requests {
	t.Helper()
	return service.NewRequests(service.RequestsDeps{Registry: app.Registry(), Server: config.DefaultServer(),
		Provider: provider, Engines: engines})
}

// TestTopographMappings checks each mapping of a Topograph name or
// parameter: what a request becomes, or how it is refused.
func TestTopographMappings(t *testing.T) {
	t.Parallel()
	slurmOut := operatorPlugin(t, "slurm", "output: /etc/slurm/topology.conf\nreconfigure: true\n")
	slinky := operatorPlugin(t, "slinky", "namespace: slinky\npodSelector: app=slurmd\nslurm:\n  plugin: topology/tree\n")
	slinkyParts := operatorPlugin(t, "slinky", "slurm:\n  topologies:\n  - {name: default, plugin: tree, clusterDefault: true}\n  - {name: gpu, plugin: block, partition: gpu}\n")
	tests := []struct {
		name     string
		provider config.Plugin
		engines  []config.Plugin
		body     string
		// want is "provider params | engine params" after mapping.
		wantProv, wantEng string
		wantErr           error
		wantField         string
		wantTrim          int
	}{
		{name: "test provider with a Topograph model", provider: operatorPlugin(t, "sim", ""),
			body:     `{"provider":{"name":"test","params":{"modelFileName":"medium.yaml","generateResponseCode":202,"topologyResponseCode":200,"description":"x"}},"engine":{"name":"slurm"}}`,
			wantProv: `sim {"model":"topograph-medium"}`, wantEng: `slurm `},
		{name: "aws-sim with a model path", provider: operatorPlugin(t, "sim", ""),
			body:     `{"provider":{"name":"aws-sim","params":{"modelFileName":"tests/models/small-tree.yaml"}},"engine":{"name":"slurm"}}`,
			wantProv: `sim {"model":"topograph-small-tree"}`, wantEng: `slurm `},
		{name: "sim model of ours keeps its name", provider: operatorPlugin(t, "sim", ""),
			body:     `{"provider":{"name":"gcp-sim","params":{"model_path":"nvl72.yaml"}},"engine":{"name":"slurm"}}`,
			wantProv: `sim {"model":"nvl72"}`, wantEng: `slurm `},
		{name: "a generate code Topograph does not take is refused", provider: operatorPlugin(t, "sim", ""),
			body:    `{"provider":{"name":"test","params":{"generateResponseCode":600}},"engine":{"name":"slurm"}}`,
			wantErr: service.ErrBadRequest, wantField: "provider.params.generateResponseCode"},
		{name: "simulated answers leave the provider's parameters", provider: operatorPlugin(t, "sim", ""),
			body:     `{"provider":{"name":"test","params":{"generateResponseCode":202,"topologyResponseCode":"503","errorMessage":"x","testcaseName":"t"}},"engine":{"name":"slurm"}}`,
			wantProv: `sim `, wantEng: `slurm `},
		{name: "api_error is refused", provider: operatorPlugin(t, "sim", ""),
			body:    `{"provider":{"name":"oci-sim","params":{"api_error":1}},"engine":{"name":"slurm"}}`,
			wantErr: service.ErrBadRequest, wantField: "provider.params.api_error"},
		{name: "lambdai is lambda; its url selects the configured one", provider: operatorPlugin(t, "lambda", "url: https://cloud.lambda.ai\n"),
			body:     `{"provider":{"name":"lambdai","params":{"url":"https://cloud.lambda.ai"}},"engine":{"name":"slurm"}}`,
			wantProv: `lambda `, wantEng: `slurm `},
		{name: "lambdai url may not define another", provider: operatorPlugin(t, "lambda", "url: https://cloud.lambda.ai\n"),
			body:    `{"provider":{"name":"lambdai","params":{"url":"http://attacker.example"}},"engine":{"name":"slurm"}}`,
			wantErr: config.ErrOperatorOnly, wantField: "provider.params.url"},
		{name: "netq apiUrl selects url", provider: operatorPlugin(t, "netq", "url: https://netq.local\n"),
			body:     `{"provider":{"name":"netq","params":{"apiUrl":"https://netq.local"}},"engine":{"name":"slurm"}}`,
			wantProv: `netq `, wantEng: `slurm `},
		{name: "nscale radarApiUrl may not define a URL", provider: operatorPlugin(t, "nscale", ""),
			body:    `{"provider":{"name":"nscale","params":{"radarApiUrl":"https://radar.example"}},"engine":{"name":"slurm"}}`,
			wantErr: config.ErrOperatorOnly, wantField: "provider.params.radarApiUrl"},
		{name: "gcp project_id selects project", provider: operatorPlugin(t, "gcp", "project: p1\n"),
			body:     `{"provider":{"name":"gcp","params":{"project_id":"p1","trimTiers":0}},"engine":{"name":"slurm"}}`,
			wantProv: `gcp `, wantEng: `slurm `},
		{name: "trimTiers is the request's", provider: operatorPlugin(t, "gcp", ""),
			body:     `{"provider":{"name":"gcp","params":{"trimTiers":2}},"engine":{"name":"slurm"}}`,
			wantProv: `gcp `, wantEng: `slurm `, wantTrim: 2},
		{name: "trimTiers past 2 is refused on a cloud", provider: operatorPlugin(t, "gcp", ""),
			body:    `{"provider":{"name":"gcp","params":{"trimTiers":3}},"engine":{"name":"slurm"}}`,
			wantErr: service.ErrBadRequest, wantField: "provider.params.trimTiers"},
		{name: "trimTiers must be an integer", provider: operatorPlugin(t, "aws", ""),
			body:    `{"provider":{"name":"aws","params":{"trimTiers":"1"}},"engine":{"name":"slurm"}}`,
			wantErr: service.ErrBadRequest, wantField: "provider.params.trimTiers"},
		{name: "a simulator takes any trimTiers, a negative one as 0", provider: operatorPlugin(t, "sim", ""),
			body:     `{"provider":{"name":"aws-sim","params":{"modelFileName":"medium.yaml","trimTiers":-1}},"engine":{"name":"slurm"}}`,
			wantProv: `sim {"model":"topograph-medium"}`, wantEng: `slurm `},
		{name: "netq ignores trimTiers, as Topograph's does", provider: operatorPlugin(t, "netq", ""),
			body:     `{"provider":{"name":"netq","params":{"trimTiers":1}},"engine":{"name":"slurm"}}`,
			wantProv: `netq `, wantEng: `slurm `},
		{name: "infiniband-bm is infiniband", provider: operatorPlugin(t, "infiniband", ""),
			body:     `{"provider":{"name":"infiniband-bm","params":{"accelerator":{"source":"nvidia-smi"}}},"engine":{"name":"slurm"}}`,
			wantProv: `infiniband `, wantEng: `slurm `},
		{name: "infiniband-k8s is the agents provider", provider: operatorPlugin(t, "agents", ""),
			body:     `{"provider":{"name":"infiniband-k8s"},"engine":{"name":"slurm"}}`,
			wantProv: `agents `, wantEng: `slurm `},
		{name: "dra reads the clique label", provider: operatorPlugin(t, "k8s-labels", ""),
			body:     `{"provider":{"name":"dra","params":{"nodeSelector":{"b":"2","a":"1"}}},"engine":{"name":"slurm"}}`,
			wantProv: `k8s-labels {"domainLabel":"nvidia.com/gpu.clique","nodeSelector":"a=1,b=2","tiers":"none"}`, wantEng: `slurm `},
		{name: "dra with another label", provider: operatorPlugin(t, "k8s-labels", ""),
			body:     `{"provider":{"name":"dra","params":{"accelerator":{"source":"kubernetes-label","kubernetesLabel":{"key":"example.com/rack"}}}},"engine":{"name":"slurm"}}`,
			wantProv: `k8s-labels {"domainLabel":"example.com/rack","tiers":"none"}`, wantEng: `slurm `},
		{name: "nebius", provider: operatorPlugin(t, "nebius", ""),
			body:     `{"provider":{"name":"nebius","params":{"trimTiers":0}},"engine":{"name":"slurm"}}`,
			wantProv: `nebius `, wantEng: `slurm `},
		{name: "oci-imds is the agents provider (the agent reads rdmaTopologyData)", provider: operatorPlugin(t, "agents", ""),
			body:     `{"provider":{"name":"oci-imds"},"engine":{"name":"slurm"}}`,
			wantProv: `agents `, wantEng: `slurm `},
		{name: "dsx is refused with advice", provider: operatorPlugin(t, "sim", ""),
			body:    `{"provider":{"name":"dsx"},"engine":{"name":"slurm"}}`,
			wantErr: service.ErrBadRequest, wantField: "provider.name"},
		{name: "aws credential token is the session token", provider: operatorPlugin(t, "aws", ""),
			body:     `{"provider":{"name":"aws","creds":{"accessKeyId":"a","secretAccessKey":"s","token":"t"}},"engine":{"name":"slurm"}}`,
			wantProv: `aws `, wantEng: `slurm `},
		{name: "slurm topologyConfigPath selects the configured file by name", provider: operatorPlugin(t, "sim", ""), engines: []config.Plugin{slurmOut},
			body:     `{"engine":{"name":"slurm","params":{"plugin":"topology/block","blockSizes":[2,4],"topologyConfigPath":"topology.conf","reconfigure":true}}}`,
			wantProv: `sim `, wantEng: `slurm {"blockSizes":[2,4],"plugin":"topology/block"}`},
		{name: "slurm topologyConfigPath may not name another file", provider: operatorPlugin(t, "sim", ""), engines: []config.Plugin{slurmOut},
			body:    `{"engine":{"name":"slurm","params":{"topologyConfigPath":"/etc/cron.d/x"}}}`,
			wantErr: config.ErrOperatorOnly, wantField: "engine.params.topologyConfigPath"},
		{name: "slurm topologyConfigPath without a configured file", provider: operatorPlugin(t, "sim", ""),
			body:    `{"engine":{"name":"slurm","params":{"topologyConfigPath":"topology.conf"}}}`,
			wantErr: config.ErrOperatorOnly, wantField: "engine.params.topologyConfigPath"},
		{name: "slurm reconfigure must match the operator's", provider: operatorPlugin(t, "sim", ""),
			body:    `{"engine":{"name":"slurm","params":{"reconfigure":true}}}`,
			wantErr: config.ErrOperatorOnly, wantField: "engine.params.reconfigure"},
		{name: "slurm topologies by name become a list", provider: operatorPlugin(t, "sim", ""),
			body:     `{"engine":{"name":"slurm","params":{"topologies":{"gpu":{"plugin":"topology/block","blockSizes":[18,72]},"cpu":{"plugin":"topology/tree","nodes":["cpu-[001-032]","c9"]},"default":{"plugin":"topology/flat","clusterDefault":true}}}}}`,
			wantProv: `sim `, wantEng: `slurm {"plugin":"topology/yaml","topologies":[{"name":"cpu","nodes":"cpu-[001-032],c9","plugin":"tree"},{"clusterDefault":true,"name":"default","plugin":"flat"},{"blockSizes":[18,72],"name":"gpu","plugin":"block"}]}`},
		{name: "slurm topologies as toposcope's list stay as they are", provider: operatorPlugin(t, "sim", ""),
			body:     `{"engine":{"name":"slurm","params":{"topologies":[{"name":"gpu","plugin":"block","blockSizes":[18]}]}}}`,
			wantProv: `sim `, wantEng: `slurm {"topologies":[{"blockSizes":[18],"name":"gpu","plugin":"block"}]}`},
		{name: "slurm topology partition is ours", provider: operatorPlugin(t, "sim", ""),
			body:     `{"engine":{"name":"slurm","params":{"topologies":{"gpu":{"plugin":"topology/block","partition":"gpu","clusterDefault":true}}}}}`,
			wantProv: `sim `, wantEng: `slurm {"plugin":"topology/yaml","topologies":[{"clusterDefault":true,"name":"gpu","partition":"gpu","plugin":"block"}]}`},
		{name: "slurm blockName is ours", provider: operatorPlugin(t, "sim", ""),
			body:     `{"engine":{"name":"slurm","params":{"plugin":"topology/block","blockName":{"nodeNameRegexp":"x","format":"y"}}}}`,
			wantProv: `sim `, wantEng: `slurm {"blockName":{"format":"y","nodeNameRegexp":"x"},"plugin":"topology/block"}`},
		{name: "slurm topologies keep their blockName", provider: operatorPlugin(t, "sim", ""),
			body:     `{"engine":{"name":"slurm","params":{"topologies":{"t":{"plugin":"topology/block","clusterDefault":true,"blockName":{"nodeNameRegexp":"x","format":"y"}}}}}}`,
			wantProv: `sim `, wantEng: `slurm {"plugin":"topology/yaml","topologies":[{"blockName":{"format":"y","nodeNameRegexp":"x"},"clusterDefault":true,"name":"t","plugin":"block"}]}`},
		{name: "k8s is k8s-labels with Topograph's keys", provider: operatorPlugin(t, "sim", ""),
			body:     `{"engine":{"name":"k8s","params":{"fabricLabels":["a/t0","a/t1"],"acceleratorLabel":"a/nvl","nodeSelector":{"gpu":"yes"}}}}`,
			wantProv: `sim `, wantEng: `k8s-labels {"domainLabel":"a/nvl","nodeSelector":"gpu=yes","preset":"topograph-v1","tierLabels":["a/t0","a/t1"]}`},
		{name: "k8s keeps the operator's preset", provider: operatorPlugin(t, "sim", ""), engines: []config.Plugin{operatorPlugin(t, "k8s-labels", "preset: toposcope\n")},
			body:     `{"engine":{"name":"k8s"}}`,
			wantProv: `sim `, wantEng: `k8s-labels `},
		{name: "k8s with both fabricLabels and tierLabels", provider: operatorPlugin(t, "sim", ""),
			body:    `{"engine":{"name":"k8s","params":{"fabricLabels":["a"],"tierLabels":["b"]}}}`,
			wantErr: service.ErrBadRequest, wantField: "engine.params.fabricLabels"},
		{name: "slinky selects the configured namespace and plugin", provider: operatorPlugin(t, "sim", ""), engines: []config.Plugin{slinky},
			body:     `{"engine":{"name":"slinky","params":{"namespace":"slinky","podSelector":{"app":"slurmd"},"topologyConfigmapName":"toposcope-topology","topologyConfigPath":"topology.conf","plugin":"topology/tree","useDynamicNodes":true}}}`,
			wantProv: `sim `, wantEng: `slinky `},
		{name: "slinky podSelector as a LabelSelector selects the operator's", provider: operatorPlugin(t, "sim", ""), engines: []config.Plugin{slinky},
			body:     `{"engine":{"name":"slinky","params":{"podSelector":{"matchLabels":{"app":"slurmd"}}}}}`,
			wantProv: `sim `, wantEng: `slinky `},
		{name: "slinky podSelector may not change the operator's", provider: operatorPlugin(t, "sim", ""), engines: []config.Plugin{slinky},
			body:    `{"engine":{"name":"slinky","params":{"podSelector":{"matchLabels":{"app.kubernetes.io/component":"compute"}}}}}`,
			wantErr: config.ErrOperatorOnly, wantField: "engine.params.podSelector"},
		{name: "slinky podSelector selects the default", provider: operatorPlugin(t, "sim", ""),
			body:     `{"engine":{"name":"slinky","params":{"podSelector":{"matchExpressions":[{"key":"app.kubernetes.io/component","operator":"In","values":["worker"]}]}}}}`,
			wantProv: `sim `, wantEng: `slinky `},
		{name: "slinky podSelector as a string selects the engine's default", provider: operatorPlugin(t, "sim", ""),
			body:     `{"engine":{"name":"slinky","params":{"podSelector":"` + slinkyengine.DefaultPodSelector + `"}}}`,
			wantProv: `sim `, wantEng: `slinky `},
		{name: "slinky topologies select the operator's", provider: operatorPlugin(t, "sim", ""), engines: []config.Plugin{slinkyParts},
			body:     `{"engine":{"name":"slinky","params":{"topologies":{"gpu":{"plugin":"topology/block","partition":"gpu"},"default":{"plugin":"topology/tree","clusterDefault":true}}}}}`,
			wantProv: `sim `, wantEng: `slinky `},
		{name: "slinky topologies may not change the operator's", provider: operatorPlugin(t, "sim", ""), engines: []config.Plugin{slinkyParts},
			body:    `{"engine":{"name":"slinky","params":{"topologies":{"gpu":{"plugin":"topology/block","partition":"debug"},"default":{"plugin":"topology/tree","clusterDefault":true}}}}}`,
			wantErr: config.ErrOperatorOnly, wantField: "engine.params.topologies"},
		{name: "slinky plugin may not change the operator's", provider: operatorPlugin(t, "sim", ""), engines: []config.Plugin{slinky},
			body:    `{"engine":{"name":"slinky","params":{"plugin":"topology/block"}}}`,
			wantErr: config.ErrOperatorOnly, wantField: "engine.params.plugin"},
		{name: "slinky skeleton-only must be the operator's", provider: operatorPlugin(t, "sim", ""), engines: []config.Plugin{slinky},
			body:    `{"engine":{"name":"slinky","params":{"configUpdateMode":"skeleton-only"}}}`,
			wantErr: config.ErrOperatorOnly, wantField: "engine.params.configUpdateMode"},
		{name: "slinky skeleton-only selects the operator's", provider: operatorPlugin(t, "sim", ""),
			engines:  []config.Plugin{operatorPlugin(t, "slinky", "configUpdateMode: skeleton-only\n")},
			body:     `{"engine":{"name":"slinky","params":{"configUpdateMode":"skeleton-only"}}}`,
			wantProv: `sim `, wantEng: `slinky `},
		{name: "k8s acceleratorDomainSourceLabel is domainSourceLabel", provider: operatorPlugin(t, "sim", ""),
			body:     `{"engine":{"name":"k8s","params":{"acceleratorDomainSourceLabel":"nvidia.com/gpu.clique"}}}`,
			wantProv: `sim `, wantEng: `k8s-labels {"domainSourceLabel":"nvidia.com/gpu.clique","preset":"topograph-v1"}`},
		{name: "nfd", provider: operatorPlugin(t, "sim", ""),
			body:     `{"engine":{"name":"nfd","params":{"cleanup":true,"nodeSelector":{"gpu":"yes"}}}}`,
			wantProv: `sim `, wantEng: `nfd {"nodeSelector":"gpu=yes"}`},
		{name: "graph is the instances engine", provider: operatorPlugin(t, "sim", ""),
			body:     `{"provider":{"name":"aws-sim"},"engine":{"name":"graph"}}`,
			wantProv: `sim `, wantEng: `instances `},
		{name: "graph of the test provider has no domain labels", provider: operatorPlugin(t, "sim", ""),
			body:     `{"provider":{"name":"test"},"engine":{"name":"graph","params":{"topologyConfigPath":""}}}`,
			wantProv: `sim `, wantEng: `instances {"domainLabels":false}`},
		{name: "graph topologyConfigPath may not define a path", provider: operatorPlugin(t, "sim", ""),
			body:    `{"engine":{"name":"graph","params":{"topologyConfigPath":"/tmp/x.json"}}}`,
			wantErr: config.ErrOperatorOnly, wantField: "engine.params.topologyConfigPath"},
		{name: "our own names pass unchanged", provider: operatorPlugin(t, "sim", ""),
			body:     `{"provider":{"name":"sim","params":{"model":"nvl72"}},"engine":{"name":"kueue","params":{"preset":"toposcope"}}}`,
			wantProv: `sim {"model":"nvl72"}`, wantEng: `kueue {"preset":"toposcope"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := compatRequests(t, tt.provider, tt.engines...)
			req := parse(t, tt.body)
			_, err := r.Lookup(req)
			if tt.wantErr != nil {
				var re *service.RequestError
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &re) || re.Field != tt.wantField {
					t.Fatalf("err = %v, want %v on field %s", err, tt.wantErr, tt.wantField)
				}
				if strings.Contains(err.Error(), "attacker") || strings.Contains(err.Error(), "/etc/slurm") {
					t.Errorf("error %q echoes a value", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := req.Provider.Name + " " + string(req.Provider.Params); got != tt.wantProv {
				t.Errorf("provider = %s, want %s", got, tt.wantProv)
			}
			if req.TrimTiers != tt.wantTrim {
				t.Errorf("TrimTiers = %d, want %d", req.TrimTiers, tt.wantTrim)
			}
			if got := req.Engine.Name + " " + string(req.Engine.Params); got != tt.wantEng {
				t.Errorf("engine = %s, want %s", got, tt.wantEng)
			}
		})
	}
}

// TestTopographCredentialToken: Topograph's AWS "token" credential
// reaches the provider as the session token.
func TestTopographCredentialToken(t *testing.T) {
	t.Parallel()
	r := compatRequests(t, config.Plugin{Name: "aws"})
	req := parse(t, `{"provider":{"name":"aws","creds":{"accessKeyId":"a","secretAccessKey":"s","token":"t"}},"engine":{"name":"slurm"}}`)
	if _, err := r.Lookup(req); err != nil {
		t.Fatal(err)
	}
	creds := req.DiscoveryRequest().Credentials
	if v, ok := creds.Get("sessionToken"); !ok || v != "t" {
		t.Errorf("sessionToken = %q %v, want t", v, ok)
	}
	if _, ok := creds.Get("token"); ok {
		t.Error("token still present")
	}
}

// TestTopographNamesAllHandled: every provider and engine name Topograph
// v1.0 registers maps onto a registered plugin or is refused with a 400
// that says what to use instead; none is an unknown name.
func TestTopographNamesAllHandled(t *testing.T) {
	t.Parallel()
	reg := app.Registry()
	provs := []string{"aws", "aws-sim", "gcp", "gcp-sim", "oci", "oci-imds", "oci-sim", "nebius", "nebius-sim", "nscale",
		"nscale-sim", "lambdai", "lambdai-sim", "netq", "infiniband-bm", "infiniband-k8s", "dra", "dsx-sim", "test"}
	for _, name := range provs {
		r := compatRequests(t, config.Plugin{Name: "unset"})
		req := parse(t, `{"provider":{"name":"`+name+`"},"engine":{"name":"slurm"}}`)
		_, err := r.Lookup(req)
		var re *service.RequestError
		switch {
		case err == nil:
			t.Fatalf("provider %s: accepted though the operator configured another", name)
		case errors.Is(err, service.ErrNotConfigured):
			if _, ferr := reg.Provider(req.Provider.Name); ferr != nil {
				t.Errorf("provider %s maps to %s: %v", name, req.Provider.Name, ferr)
			}
		case errors.As(err, &re) && re.Field == "provider.name" && strings.Contains(err.Error(), "not supported"):
		default:
			t.Errorf("provider %s: %v", name, err)
		}
	}
	for _, name := range []string{"slurm", "slinky", "k8s", "nfd", "graph"} {
		r := compatRequests(t, config.Plugin{Name: "sim"})
		req := parse(t, `{"engine":{"name":"`+name+`"}}`)
		_, err := r.Lookup(req)
		var re *service.RequestError
		switch {
		case err == nil:
			if _, ferr := reg.Engine(req.Engine.Name); ferr != nil {
				t.Errorf("engine %s maps to %s: %v", name, req.Engine.Name, ferr)
			}
		case errors.As(err, &re) && re.Field == "engine.name" && strings.Contains(err.Error(), "not supported"):
		default:
			t.Errorf("engine %s: %v", name, err)
		}
	}
}
