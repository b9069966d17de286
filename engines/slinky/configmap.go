package slinky

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/engines"
	"github.com/toposcope/toposcope/engines/kube"
	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/topology"
)

// maxConfigMapData is the apiserver's limit on a ConfigMap's data (1 MiB),
// less room for the object's metadata.
const maxConfigMapData = 1<<20 - 16<<10

// ErrOperatorOwned is wrapped when the target ConfigMap is owned by a
// Slinky Controller: the operator would overwrite what toposcope writes.
var ErrOperatorOwned = errors.New("ConfigMap is owned by the Slinky operator")

// cmPlan is the planned ConfigMap write; op "" means none.
type cmPlan struct {
	op  string
	obj *corev1.ConfigMap
}

// contentHash is the content-hash annotation value of data.
func contentHash(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// graphSnapshot identifies g by the hash of its JSON form.
func graphSnapshot(g *topology.Graph) string {
	data, err := json.Marshal(g)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return "graph-sha256:" + hex.EncodeToString(sum[:16])
}

// desiredConfigMap is the ConfigMap holding data, generation gen.
func (e *Engine) desiredConfigMap(data []byte, gen int, snapshot string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: e.cfg.ConfigMap, Namespace: e.cfg.Namespace,
			Labels:      map[string]string{keys.ManagedBy: kubeclient.FieldManager},
			Annotations: e.annotations(data, gen, snapshot),
		},
		Data: map[string]string{e.cfg.Key(): string(data)},
	}
}

func (e *Engine) annotations(data []byte, gen int, snapshot string) map[string]string {
	return map[string]string{
		keys.Generation:     strconv.Itoa(gen),
		keys.ContentHash:    contentHash(data),
		keys.SourceSnapshot: snapshot,
		keys.SlurmVersion:   e.cfg.Slurm.SlurmVersion,
		keys.SlurmPlugin:    e.cfg.Slurm.Plugin,
	}
}

// planConfigMap reads the ConfigMap and decides whether to create it,
// update it (only when the file's content differs; other keys, labels and
// annotations are kept), or leave it.
func (e *Engine) planConfigMap(ctx context.Context, data []byte, snapshot string, res *kube.Result) (cmPlan, error) {
	if len(data) > maxConfigMapData {
		return cmPlan{}, fmt.Errorf("%s: the topology file is %d bytes, more than a ConfigMap holds (1 MiB): %w", Name, len(data), engines.ErrInexpressible)
	}
	cms := e.core.ConfigMaps(e.cfg.Namespace)
	cur, err := cms.Get(ctx, e.cfg.ConfigMap, metav1.GetOptions{})
	change := kube.Change{Kind: "ConfigMap", Namespace: e.cfg.Namespace, Name: e.cfg.ConfigMap,
		Set: map[string]string{"data " + e.cfg.Key(): fmt.Sprintf("%d bytes, %s", len(data), contentHash(data))}}
	switch {
	case apierrors.IsNotFound(err):
		change.Op = "create"
		res.Changes = append(res.Changes, change)
		res.Changed++
		return cmPlan{op: "create", obj: e.desiredConfigMap(data, 1, snapshot)}, nil
	case err != nil:
		return cmPlan{}, fmt.Errorf("%s: get ConfigMap %s/%s: %w", Name, e.cfg.Namespace, e.cfg.ConfigMap, err)
	}
	for _, o := range cur.OwnerReferences {
		if o.Kind == "Controller" && strings.HasPrefix(o.APIVersion, "slinky.slurm.net/") {
			return cmPlan{}, fmt.Errorf("%s: ConfigMap %s/%s is owned by Controller %s: %w; write to a dedicated ConfigMap", Name, cur.Namespace, cur.Name, o.Name, ErrOperatorOwned)
		}
	}
	if cur.Data[e.cfg.Key()] == string(data) {
		res.Unchanged++
		return cmPlan{}, nil
	}
	gen, _ := strconv.Atoi(cur.Annotations[keys.Generation])
	obj := cur.DeepCopy()
	if obj.Data == nil {
		obj.Data = map[string]string{}
	}
	obj.Data[e.cfg.Key()] = string(data)
	if obj.Labels == nil {
		obj.Labels = map[string]string{}
	}
	obj.Labels[keys.ManagedBy] = kubeclient.FieldManager
	if obj.Annotations == nil {
		obj.Annotations = map[string]string{}
	}
	for k, v := range e.annotations(data, gen+1, snapshot) {
		obj.Annotations[k] = v
	}
	change.Op = "update"
	change.Note = "generation " + strconv.Itoa(gen+1)
	res.Changes = append(res.Changes, change)
	res.Changed++
	return cmPlan{op: "update", obj: obj}, nil
}

// write creates or updates the ConfigMap. An update carries the
// resourceVersion read by planConfigMap, so a concurrent writer makes it
// fail rather than be overwritten.
func (p cmPlan) write(ctx context.Context, e *Engine) error {
	cms := e.core.ConfigMaps(e.cfg.Namespace)
	var err error
	switch p.op {
	case "create":
		_, err = cms.Create(ctx, p.obj, metav1.CreateOptions{FieldManager: kubeclient.FieldManager})
	case "update":
		_, err = cms.Update(ctx, p.obj, metav1.UpdateOptions{FieldManager: kubeclient.FieldManager})
	default:
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %s ConfigMap %s/%s: %w: %w", Name, p.op, e.cfg.Namespace, e.cfg.ConfigMap, kube.ErrWrite, err)
	}
	return nil
}
