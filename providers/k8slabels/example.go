package k8slabels

// exampleParams is the factory's example: static Nodes (no cluster) of
// an EKS capacity block with three network layers and an NVLink clique,
// and a GKE node.
const exampleParams = `nodes:
  - name: ip-10-0-1-11
    providerID: aws:///us-east-1a/i-0a11
    gpus: 4
    labels:
      topology.k8s.aws/network-node-layer-1: nn-top
      topology.k8s.aws/network-node-layer-2: nn-spine-a
      topology.k8s.aws/network-node-layer-3: nn-leaf-a1
      nvidia.com/gpu.clique: 7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab.32766
  - name: ip-10-0-1-12
    providerID: aws:///us-east-1a/i-0a12
    gpus: 4
    labels:
      topology.k8s.aws/network-node-layer-1: nn-top
      topology.k8s.aws/network-node-layer-2: nn-spine-a
      topology.k8s.aws/network-node-layer-3: nn-leaf-a2
      nvidia.com/gpu.clique: 7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab.32766
  - name: gke-a4-pool-0
    providerID: gce://proj/us-central1-b/gke-a4-pool-0
    gpus: 8
    labels:
      cloud.google.com/gce-topology-block: b7f3
      cloud.google.com/gce-topology-subblock: sb02
`
