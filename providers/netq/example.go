package netq

// exampleParams is the factory's example: a NetQ topology graph inline
// (two spines, two leaves, two hosts each), which needs no server.
const exampleParams = `snapshot:
  nodes:
    - id: tier-2
      node_type: tier
      tier: 2
      compounded_nodes:
        - {id: node10, name: spine01, tier: 2, device_type: switch, node_type: device}
        - {id: node11, name: spine02, tier: 2, device_type: switch, node_type: device}
    - id: tier-1
      node_type: tier
      tier: 1
      compounded_nodes:
        - {id: node20, name: leaf01, tier: 1, device_type: switch, node_type: device}
        - {id: node21, name: leaf02, tier: 1, device_type: switch, node_type: device}
    - id: tier-unclassified
      node_type: tier
      tier: -1
      compounded_nodes:
        - {id: node30, name: dgx-01, tier: -1, device_type: discovered_via_lldp, node_type: device}
        - {id: node31, name: dgx-02, tier: -1, device_type: discovered_via_lldp, node_type: device}
        - {id: node32, name: dgx-03, tier: -1, device_type: discovered_via_lldp, node_type: device}
        - {id: node33, name: dgx-04, tier: -1, device_type: discovered_via_lldp, node_type: device}
  links:
    - {id: node20-*-node10, src: node10, target: node20, size: 8}
    - {id: node20-*-node11, src: node11, target: node20, size: 8}
    - {id: node21-*-node10, src: node10, target: node21, size: 8}
    - {id: node21-*-node11, src: node11, target: node21, size: 8}
    - {id: node20-*-node30, src: node20, target: node30, size: 4}
    - {id: node20-*-node31, src: node20, target: node31, size: 4}
    - {id: node21-*-node32, src: node21, target: node32, size: 4}
    - {id: node21-*-node33, src: node21, target: node33, size: 4}
`
