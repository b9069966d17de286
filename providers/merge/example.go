package merge

// exampleParams is the factory's example: the switch tree from EKS node
// labels (given inline, no cluster) and the NVLink domains from
// nvidia.com/gpu.clique values, of the same three nodes.
const exampleParams = `sources:
  - provider: k8s-labels
    use: [tree]
    params:
      domainLabel: "-"
      nodes:
        - {name: gpu01, labels: {topology.k8s.aws/network-node-layer-1: nn-top, topology.k8s.aws/network-node-layer-2: nn-leaf-1}}
        - {name: gpu02, labels: {topology.k8s.aws/network-node-layer-1: nn-top, topology.k8s.aws/network-node-layer-2: nn-leaf-1}}
        - {name: gpu03, labels: {topology.k8s.aws/network-node-layer-1: nn-top, topology.k8s.aws/network-node-layer-2: nn-leaf-2}}
  - provider: nvlink
    use: [domains]
    params:
      cliques:
        gpu01: 7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab.1
        gpu02: 7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab.1
        gpu03: 7c1c6f5c-1a2b-4c3d-8e9f-0123456789ab.2
`
